"""The interface in a browser: Swagger UI at /docs over spec/openapi.json, fully offline.

Swagger UI's script and style come from the fastapi-offline package (served here from its
folder), never from a CDN; the page's Content-Security-Policy keeps the browser on this server.
"Try it out" posts to the server that served the page (the spec's one server, `/`, is
wherever the document was read from). ReDoc's
bundle would load a logo from a CDN, so /redoc leads to /docs.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Final

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from nearrpc.spec import spec_document

ASSETS_PATH: Final = "/docs/assets"
# Swagger UI runs one inline script (its set-up) and sets inline styles
_CSP: Final = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'"
)
_SWAGGER_PARAMETERS: Final = {
    "validatorUrl": None,  # no badge fetched from the online validator
    "displayRequestDuration": True,
}


def add_docs_page(app: FastAPI) -> None:
    assets = files("fastapi_offline") / "static"
    app.mount(ASSETS_PATH, StaticFiles(directory=str(assets)), name="docs-assets")
    title = f"{spec_document()['info']['title']} - Swagger UI"

    @app.api_route("/docs", methods=["GET", "HEAD"], include_in_schema=False)
    async def swagger_ui(request: Request) -> Response:
        root = request.scope.get("root_path", "").rstrip("/")
        page = get_swagger_ui_html(
            openapi_url=f"{root}/openapi.json",
            title=title,
            swagger_js_url=f"{root}{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
            swagger_ui_parameters=_SWAGGER_PARAMETERS,
        )
        page.headers["Content-Security-Policy"] = _CSP
        return page

    @app.api_route("/redoc", methods=["GET", "HEAD"], include_in_schema=False)
    async def redoc(request: Request) -> Response:
        return RedirectResponse(f"{request.scope.get('root_path', '').rstrip('/')}/docs")
