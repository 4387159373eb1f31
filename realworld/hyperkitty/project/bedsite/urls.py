"""HyperKitty's URLs at / (the test project's urls_test.py, hyperkitty/tests/, without
Django's admin): the archives, django-mailman3's profile pages and allauth's sign-in pages the
templates link ("登录")."""
from django.urls import include, path

urlpatterns = [
    path('', include('hyperkitty.urls')),
    path('', include('django_mailman3.urls')),
    path('accounts/', include('allauth.urls')),
]
