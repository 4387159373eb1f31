from django.conf.urls import include, url
from django.contrib.auth.views import LoginView
from django.views.generic import TemplateView

urlpatterns = [
    url(r'^', include('pybb.urls', namespace='pybb')),
    # pybbm's "log in or register to reply" line (pybb/_need_to_login_message.html) reverses
    # these two names, which it leaves to the site (django-registration's, in its examples).
    url(r'^accounts/login/$', LoginView.as_view(), name='auth_login'),
    url(r'^accounts/register/$', TemplateView.as_view(template_name='registration/closed.html'),
        name='registration_register'),
]
