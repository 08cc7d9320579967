"""factory_boy factories for the catalogue and users (factories over fixtures)."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from engine.visual_plan import compose_two_field_text
from leaderboard.models import Benchmark, Response, SubjectModel, Task, TaskSet
from leaderboard.services.catalogue import role_groups_ensure, sha256_text

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")

    @classmethod
    def _create(cls, model_class, *args, role=None, **kwargs):
        user = super()._create(model_class, *args, **kwargs)
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
        if role:
            role_groups_ensure()
            user.groups.add(Group.objects.get(name=role))
            if role == "admin":
                user.is_staff = True
                user.save(update_fields=["is_staff"])
        return user


class BenchmarkFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Benchmark
        django_get_or_create = ("kind",)

    kind = Benchmark.Kind.EKPHRASIS
    name = "Ekphrasis"


class TaskSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TaskSet

    benchmark = factory.SubFactory(BenchmarkFactory)
    name = factory.Sequence(lambda n: f"set{n}")
    version = "1"


class TaskFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Task

    task_set = factory.SubFactory(TaskSetFactory)
    external_id = factory.Sequence(lambda n: f"t{n:03d}")
    family = "abstraction"
    subtype = "process/temporal"
    brief = factory.Sequence(lambda n: f"Express brief number {n} in one static image.")
    position = factory.Sequence(lambda n: n)


class SubjectModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SubjectModel
        django_get_or_create = ("display_name",)

    display_name = factory.Sequence(lambda n: f"model-{n}")


class ResponseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Response

    task = factory.SubFactory(TaskFactory)
    subject_model = factory.SubFactory(SubjectModelFactory)
    sample = 1
    is_primary = factory.LazyAttribute(lambda r: r.sample == 1)
    core_idea = factory.Sequence(lambda n: f"A paper lantern that folds time into creases, idea {n}.")
    visual_description = factory.Sequence(
        lambda n: f"A folded paper lantern hangs in a dim stairwell, its creases lit amber, variant {n}."
    )
    raw_text = factory.LazyAttribute(lambda r: compose_two_field_text(r.core_idea, r.visual_description))
    raw_sha256 = factory.LazyAttribute(lambda r: sha256_text(r.raw_text))
    normalisation_method = Response.Normalisation.FIELDS
