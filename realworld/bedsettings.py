"""What the Django beds' settings share (machina, Spirit): a project run in
place by `bed.sh` (`bed_django` in bed-lib.sh puts this folder on PYTHONPATH),
its database, media and static files in BED_WORK, a Chinese interface and
Beijing wall-clock time, Django's own apps and middleware. Each bed's
`bedsite/settings.py` starts with `from bedsettings import *` and adds its
package's apps, middleware, templates and caches.
"""
import os
from pathlib import Path

WORK = Path(os.environ['BED_WORK'])

SECRET_KEY = 'luntan-test-bed-not-secret'
DEBUG = os.environ.get('BED_DEBUG') == '1'
ALLOWED_HOSTS = ['*']

DJANGO_APPS = [
    'django.contrib.auth',
    'django.contrib.contenttypes',
    'django.contrib.sessions',
    'django.contrib.messages',
    'django.contrib.staticfiles',
]

# Django's middleware, without LocaleMiddleware: the interface is Chinese
# whatever a client's Accept-Language says.
DJANGO_MIDDLEWARE = [
    'django.middleware.security.SecurityMiddleware',
    'django.contrib.sessions.middleware.SessionMiddleware',
    'django.middleware.common.CommonMiddleware',
    'django.middleware.csrf.CsrfViewMiddleware',
    'django.contrib.auth.middleware.AuthenticationMiddleware',
    'django.contrib.messages.middleware.MessageMiddleware',
    'django.middleware.clickjacking.XFrameOptionsMiddleware',
]

# Django's own context processors, in its project template's order; the
# processors of Django's other parts a bed's templates use are DJANGO_MORE_CONTEXT.
DJANGO_CONTEXT = [
    'django.template.context_processors.debug',
    'django.template.context_processors.request',
    'django.contrib.auth.context_processors.auth',
    'django.contrib.messages.context_processors.messages',
]
DJANGO_MORE_CONTEXT = [
    'django.template.context_processors.i18n',
    'django.template.context_processors.media',
    'django.template.context_processors.static',
    'django.template.context_processors.tz',
]


def django_templates(context_processors, dirs=()):
    """Django's template engine: the apps' template folders, then `dirs`."""
    return [{
        'BACKEND': 'django.template.backends.django.DjangoTemplates',
        'DIRS': [str(d) for d in dirs],
        'APP_DIRS': True,
        'OPTIONS': {'context_processors': list(context_processors)},
    }]


ROOT_URLCONF = 'bedsite.urls'
WSGI_APPLICATION = 'bedsite.wsgi.application'

DATABASES = {
    'default': {
        'ENGINE': 'django.db.backends.sqlite3',
        'NAME': str(WORK / 'db.sqlite3'),
    },
}
DEFAULT_AUTO_FIELD = 'django.db.models.AutoField'

# Chinese interface, wall clock in Beijing time.
LANGUAGE_CODE = 'zh-hans'
TIME_ZONE = 'Asia/Shanghai'
USE_I18N = True
USE_TZ = True

STATIC_URL = '/static/'
STATIC_ROOT = str(WORK / 'static')
MEDIA_URL = '/media/'
MEDIA_ROOT = str(WORK / 'media')

LOGGING = {
    'version': 1,
    'disable_existing_loggers': False,
    'handlers': {'console': {'class': 'logging.StreamHandler'}},
    'root': {'handlers': ['console'], 'level': 'WARNING'},
}
