"""Misago's URLs at / (namespace misago) and the JavaScript catalogue its pages load
(devproject/urls.py of Misago's repository, without Django's admin and the debug toolbar)."""
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

urlpatterns = [
    path('', include('misago.urls', namespace='misago')),
    path('django-i18n.js', JavaScriptCatalog.as_view(packages=['misago']), name='django-i18n'),
]

# Misago's error pages (its middlewares raise what these handle).
handler403 = 'misago.core.errorpages.permission_denied'
handler404 = 'misago.core.errorpages.page_not_found'
