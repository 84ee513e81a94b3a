"""The interactive API reference page, rendered from the OpenAPI document."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from typing import Any

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>edukg API reference</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:1rem;color:#1a1a1a}
h1{font-size:1.6rem}code,pre{font-family:ui-monospace,monospace;font-size:.9rem}
details{border:1px solid #bbb;border-radius:6px;margin:.5rem 0;padding:.5rem .8rem}
summary{cursor:pointer;font-weight:600}.m{color:#05603a;margin-right:.5rem}
label{display:block;margin:.3rem 0}input{font:inherit;padding:.2rem .4rem;width:22rem;max-width:100%}
button{font:inherit;padding:.3rem .9rem;margin-top:.4rem}
pre{background:#f4f4f4;padding:.6rem;overflow:auto;max-height:28rem;white-space:pre-wrap}
.req{color:#a00}
</style></head><body>
<h1>edukg API reference</h1>
<p>Every operation below needs an API key (<code>edukg keys create NAME</code>). The key is kept
in this tab's session storage only. Machine-readable: <a href="/openapi.json">/openapi.json</a>.</p>
<label>API key <input id="key" type="password" autocomplete="off"></label>
<div id="ops">__OPS__</div>
<script>
const keyBox=document.getElementById('key');
keyBox.value=sessionStorage.getItem('edukg-key')||'';
keyBox.addEventListener('change',()=>sessionStorage.setItem('edukg-key',keyBox.value));
for(const form of document.querySelectorAll('form[data-path]')){
  form.addEventListener('submit',async ev=>{
    ev.preventDefault();
    let path=form.dataset.path;const qs=new URLSearchParams();
    for(const input of form.querySelectorAll('input[name]')){
      const v=input.value.trim();if(!v)continue;
      if(input.dataset.in==='path'){path=path.replace('{'+input.name+'}',encodeURIComponent(v));}
      else{for(const part of (input.dataset.repeat?v.split(','):[v]))qs.append(input.name,part.trim());}
    }
    const url=path+(qs.toString()?'?'+qs:'');const out=form.querySelector('pre');
    out.textContent='GET '+url+' ...';
    try{const r=await fetch(url,{headers:{'x-api-key':keyBox.value}});
      const text=await r.text();let shown=text;
      try{shown=JSON.stringify(JSON.parse(text),null,2);}catch(e){}
      out.textContent='GET '+url+'\\n'+r.status+' '+r.statusText+'\\n\\n'+shown;
    }catch(e){out.textContent='Request failed: '+e;}
  });
}
</script></body></html>
"""


def _operation_html(path: str, op: dict[str, Any]) -> str:
    fields = []
    for p in op.get("parameters", []):
        repeat = p["schema"].get("type") == "array"
        mark = ' <span class="req">required</span>' if p.get("required") else ""
        hint = " (comma-separated)" if repeat else ""
        fields.append(
            f"<label><code>{html.escape(p['name'])}</code> ({p['in']}){mark}{hint}: "
            f"{html.escape(p.get('description', ''))}<br>"
            f'<input name="{html.escape(p["name"])}" data-in="{p["in"]}"'
            f"{' data-repeat=1' if repeat else ''}></label>"
        )
    return (
        f"<details><summary><span class=m>GET</span><code>{html.escape(path)}</code> "
        f"{html.escape(op.get('summary', ''))}</summary>"
        f"<p>{html.escape(op.get('description', ''))}</p>"
        f'<form data-path="{html.escape(path)}">{"".join(fields)}'
        f"<button type=submit>Send</button><pre aria-live=polite></pre></form></details>"
    )


def security_headers(page: bytes) -> list[tuple[bytes, bytes]]:
    """Headers for the page where users paste their key: its own inline script alone may
    run (by hash), nothing may frame it, and it talks only to this server."""
    hashes = b" ".join(
        b"'sha256-" + base64.b64encode(hashlib.sha256(script).digest()) + b"'"
        for script in re.findall(rb"<script>(.*?)</script>", page, re.S)
    )
    policy = (
        b"default-src 'none'; script-src " + hashes + b"; style-src 'unsafe-inline'; "
        b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    )
    return [
        (b"content-security-policy", policy),
        (b"x-frame-options", b"DENY"),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
    ]


def render_docs(spec: dict[str, Any]) -> bytes:
    """The HTML page: one try-it form per operation."""
    ops = "".join(
        _operation_html(path, item["get"]) for path, item in spec["paths"].items() if "get" in item
    )
    return _PAGE.replace("__OPS__", ops).encode()
