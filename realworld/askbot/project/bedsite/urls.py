"""Askbot's URLs at / (askbot/deployment/templates/urls_py.jinja2: Askbot's, Django's admin,
followit's, whose toggle URL every profile page reverses; uploaded files left out)."""
from django.contrib import admin
from django.urls import include, path, re_path

import askbot.urls
import followit.urls

admin.autodiscover()

urlpatterns = [
    path('', include(askbot.urls)),
    re_path(r'^admin/', admin.site.urls),
    re_path(r'^followit/', include(followit.urls)),
]

handler500 = 'askbot.views.error.internal_error'
