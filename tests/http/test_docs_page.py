"""The docs page in a real browser: /docs renders the interface offline and "try it out" works.

Debian's chromium, headless, driven by Playwright, against a real `nearrpc serve`. The page
must load with no failed request and nothing fetched from anywhere but the server, list the
five methods (and POST /), and a "try it out" of `block` must show the block the server
answers. A screenshot of the page after the call is left in the test artifacts folder.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from nearrpc.generated.methods import METHODS
from tests.support.browser import artifacts_dir, browser_page
from tests.support.live_server import LiveServer
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live


def test_redoc_leads_to_the_docs_page(http: httpx.Client) -> None:
    answer = http.get("/redoc")
    assert answer.status_code == 307 and answer.headers["location"].endswith("/docs")


def test_the_docs_page_assets_come_from_the_server(http: httpx.Client) -> None:
    page = http.get("/docs")
    assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert f"/docs/assets/{asset}" in page.text
        assert http.get(f"/docs/assets/{asset}").status_code == 200
    assert "://" not in page.text.replace("http://127.0.0.1", "")  # no absolute URL to elsewhere


@pytest.mark.long(0.3)  # a browser's first start
@pytest.mark.toolchain  # Chromium
def test_try_it_out_of_block_in_a_real_browser(
    server: LiveServer, record_property: Callable[[str, object], None]
) -> None:
    facts = sample_facts()
    with browser_page() as (page, traffic):
        page.goto(f"{server.url}/docs")
        page.wait_for_selector(".opblock-summary-path", timeout=30_000)
        paths = {text.replace("\u200b", "") for text in page.locator(".opblock-summary-path").all_inner_texts()}
        assert paths == {"/", *(f"/{name}" for name in METHODS)}, paths
        overview = artifacts_dir() / "docs-page.png"
        page.screenshot(path=str(overview))

        block = page.locator("#operations-blocks-block")
        block.locator(".opblock-summary-control").click()
        # the spec's examples are offered by their summaries, and "try it out" starts from the first
        # one: the head block by height, a request that works on the sample chain as it stands
        options = block.locator(".opblock-section-request-body .examples-select option")
        options.first.wait_for(state="attached", timeout=30_000)  # drawn after the section opens
        offered = options.all_inner_texts()
        assert offered[:2] == ["block_id: the head height", "block_id: a block hash"], offered
        block.locator("button.try-out__btn").click()
        body = block.locator("textarea.body-param__text")
        request = json.loads(body.input_value())
        assert request["method"] == "block" and request["params"] == {"block_id": facts.head_height}, request
        with page.expect_response(lambda response: response.request.method == "POST", timeout=30_000) as sent:
            block.locator("button.execute").click()
        assert sent.value.url == f"{server.url}/block" and sent.value.status == 200
        shown = block.locator(".live-responses-table .response-col_description pre.microlight").first
        shown.wait_for(timeout=30_000)
        header = json.loads(shown.inner_text())["result"]["header"]
        assert (header["height"], header["hash"]) == (facts.head_height, facts.head_hash)

        # the call and its answer as the browser shows them (the request, the URL, the block)
        screenshot = artifacts_dir() / "docs-page-block.png"
        block.locator(".responses-wrapper").first.scroll_into_view_if_needed()
        page.mouse.wheel(0, -250)
        page.screenshot(path=str(screenshot))
        for shot in (overview, screenshot):
            record_property("terminal_summary", f"docs page screenshot: {shot}")
            print(f"docs page screenshot: {shot}")

    assert traffic.blocked == [] and traffic.off_host() == set(), (traffic.blocked, traffic.off_host())
    assert traffic.failed == [] and traffic.bad_status == [], (traffic.failed, traffic.bad_status)
    assert traffic.console_errors == [], traffic.console_errors
    assert f"{server.url}/docs/assets/swagger-ui-bundle.js" in traffic.requests
