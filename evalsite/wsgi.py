import os

from django.core.wsgi import get_wsgi_application

from evalsite.request_charset import charset_set_aside
from evalsite.script_name import script_name_set_aside
from evalsite.startup_heap import startup_objects_frozen

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
# A charset other than UTF-8, and a script name that is not UTF-8, are set aside before Django builds the request
# (it decodes the query string at once, and the script name before it can answer with a page).
application = script_name_set_aside(charset_set_aside(get_wsgi_application()))
# Last: the loaded site's objects are kept out of every later garbage collection (evalsite/startup_heap.py).
startup_objects_frozen()
