import os

from django.core.wsgi import get_wsgi_application

from evalsite.request_charset import charset_set_aside

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
# A charset other than UTF-8 is set aside before Django builds the request (it decodes the query string at once).
application = charset_set_aside(get_wsgi_application())
