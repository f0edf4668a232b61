"""The native API's routers, one per resource; `app.create_app` includes them."""
