"""The Celery app Misago's shared tasks run on (devproject/celery.py of Misago's repository),
configured from the settings' CELERY_* names: eager, so nothing is queued."""
from celery import Celery

app = Celery('bedsite')
app.config_from_object('django.conf:settings', namespace='CELERY')
app.autodiscover_tasks()
