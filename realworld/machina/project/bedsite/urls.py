from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path('', RedirectView.as_view(url='/forum/', permanent=False)),
    path('forum/', include('machina.urls')),
]
