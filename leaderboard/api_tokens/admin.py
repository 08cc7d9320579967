from django.contrib import admin, messages

from leaderboard.api_tokens import services
from leaderboard.api_tokens.models import ApiToken
from leaderboard.roles import token_holder_accounts


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Admins create tokens for a user (the secret is shown once, in the message) and revoke them."""

    list_display = ("name", "user", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    fields = ("user", "name", "prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "created_at", "last_used_at")
    actions = ["revoke"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            # Not every user: a crowd study adds an internal account per participant, and none may hold a token.
            kwargs["queryset"] = token_holder_accounts().order_by("username")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        # A token acts as the user it was made for (its secret went to them): it never moves to another.
        if obj is not None:
            return ("user", *self.readonly_fields)
        return self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            return
        token, secret = services.api_token_create(user=obj.user, name=obj.name)
        obj.pk = token.pk
        obj.refresh_from_db()
        messages.warning(request, f"Token for {obj.user}: {secret} — copy it now, it is not shown again.")

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset:
            services.api_token_revoke(token=token)
