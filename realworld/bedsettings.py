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
