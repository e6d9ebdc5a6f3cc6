"""The Client's Markdown parser (gateway/web/src/markdown.js, run in Node.js): its output and its speed.

The output of awkward inline Markdown is pinned case by case (the parser became linear and
must give what the forward scans gave); openers without closers, 16 KiB of them as a
document's Markdown may hold, must parse in time linear in the text, not seconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.javascript import NODE, node_json

pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the Client's JavaScript modules")

WEB = Path(__file__).resolve().parents[2] / "gateway" / "web" / "src"
# Parses each text of {outputs, timed} on stdin: `outputs` to the blocks as compact HTML-like
# text, `timed` to the milliseconds its parse took (the first call of all: no warm-up).
SCRIPT = """
const { parseMarkdown } = await import(MODULE);
const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const tag = (name, inner) => `<${name}>${inner}</${name}>`;
const inline = (xs) => xs.map((x) => (x.type === 'text' ? esc(x.text) : x.type === 'br' ? '<br>'
  : x.type === 'code' ? tag('code', esc(x.text)) : tag(x.type, inline(x.children)))).join('');
const blocks = (bs) => bs.map((b) => (b.type === 'p' ? tag('p', inline(b.children))
  : b.type === 'h' ? tag(`h${b.level}`, inline(b.children)) : b.type === 'pre' ? tag('pre', esc(b.text))
  : b.type === 'hr' ? '<hr>' : b.type === 'blockquote' ? tag('blockquote', blocks(b.children))
  : tag(b.type, b.items.map((item) => tag('li', blocks(item))).join('')))).join('');
let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const { outputs, timed } = JSON.parse(input);
  const time = (text) => { const start = performance.now(); parseMarkdown(text); return performance.now() - start; };
  const result = { outputs: outputs.map((text) => blocks(parseMarkdown(text))), timed: timed.map(time) };
  process.stdout.write(JSON.stringify(result));
});
""".replace("MODULE", json.dumps((WEB / "markdown.js").as_uri()))

# (Markdown, its blocks): nested and unmatched emphasis, `*` and `_` mixed, links with
# brackets in their text, images, code spans inside emphasis, breaks, inline HTML.  Some
# outputs are not CommonMark's (`*a **b** c*`); they are this parser's, kept as they were.
CASES: list[tuple[str, str]] = [
    ("***a***", "<p><strong><em>a</em></strong></p>"),
    ("**a *b* c**", "<p><strong>a <em>b</em> c</strong></p>"),
    ("*a **b** c*", "<p><em>a *</em>b** c*</p>"),
    ("_a *b* c_", "<p><em>a <em>b</em> c</em></p>"),
    ("*a _b_ c*", "<p><em>a <em>b</em> c</em></p>"),
    ("~~a *b*~~", "<p><del>a <em>b</em></del></p>"),
    ("**a**b**c**", "<p><strong>a</strong>b<strong>c</strong></p>"),
    ("*a", "<p>*a</p>"),
    ("**a *b", "<p>**a *b</p>"),
    ("*a **b", "<p><em>a *</em>b</p>"),
    ("_a _b _c", "<p>_a _b _c</p>"),
    ("~~a ~~b", "<p>~~a ~~b</p>"),
    ("a * b * c", "<p>a * b * c</p>"),
    ("*a *b *c d*", "<p><em>a *b *c d</em></p>"),
    ("* a*", "<ul><li><p>a*</p></li></ul>"),
    ("*a *", "<p>*a *</p>"),
    ("~~~a~~", "<pre></pre>"),
    ("~a~", "<p>~a~</p>"),
    ("*a_b*", "<p><em>a_b</em></p>"),
    ("_a*b_", "<p><em>a*b</em></p>"),
    ("**a__b**", "<p><strong>a__b</strong></p>"),
    ("__a**b__", "<p><strong>a**b</strong></p>"),
    ("snake_case_word", "<p>snake_case_word</p>"),
    ("_a_b_", "<p><em>a_b</em></p>"),
    ("a_b_ c", "<p>a_b_ c</p>"),
    ("_a_1", "<p>_a_1</p>"),
    ("*a`*`b*", "<p><em>a<code>*</code>b</em></p>"),
    ("*a \\* b*", "<p><em>a * b</em></p>"),
    ("[a [b] c](u)", "<p>a [b] c</p>"),
    ("[a](u) [b](v)", "<p>a b</p>"),
    ("[a\\]b](u)", "<p>a]b</p>"),
    ("\\[a](u)", "<p>[a](u)</p>"),
    ("[[a](u)](v)", "<p>a</p>"),
    ("[a](u (t))", "<p>a</p>"),
    ("[a] (u)", "<p>[a] (u)</p>"),
    ("[a]", "<p>[a]</p>"),
    ("[*a*](u)", "<p><em>a</em></p>"),
    ("[a](u", "<p>[a](u</p>"),
    ("[a]]](u)", "<p>[a]]](u)</p>"),
    ("[a(b)](c)", "<p>a(b)</p>"),
    ("[a](b)c)", "<p>ac)</p>"),
    ("[a\\\\](b)", "<p>a\\</p>"),
    ("![a](u)", "<p></p>"),
    ("![a [b]](u) c", "<p> c</p>"),
    ("!![a](u)", "<p>!</p>"),
    ("![a]", "<p>![a]</p>"),
    ("![a](u", "<p>![a](u</p>"),
    ("x ![[a](b)](c) y", "<p>x  y</p>"),
    ("*![a](u)*", "<p><em></em></p>"),
    ("`a*b*`", "<p><code>a*b*</code></p>"),
    ("``a`b``", "<p><code>a`b</code></p>"),
    ("` `` `", "<p>` `<code> </code></p>"),
    ("```a``", "<p>`<code>a</code></p>"),
    ("a ``` b", "<p>a ``` b</p>"),
    ("`a\nb`", "<p><code>a b</code></p>"),
    ("a  \nb", "<p>a<br>b</p>"),
    ("a \nb", "<p>a\nb</p>"),
    ("a\\\nb", "<p>a<br>b</p>"),
    ("*a  \nb*", "<p><em>a<br>b</em></p>"),
    ("a <!-- x --> b", "<p>a  b</p>"),
    ("a <!-- x", "<p>a &lt;!-- x</p>"),
    ("a <!-- x --> b <!-- y", "<p>a  b &lt;!-- y</p>"),
    ("a <b>c</b>", "<p>a c</p>"),
    ("<http://x.y> and <a@b.c>", "<p>http://x.y and a@b.c</p>"),
]

LIMIT = 16384  # a Markdown text's length limit (characters)
# Openers with no closer at all, each a text at the length limit: every one was a scan to the
# end.  The first six took 0.3–1.1 s; the others 25–110 ms (quadratic too, on smaller constants).
SLOW_BEFORE: dict[str, str] = {
    "emphasis *": "*a " * 5461,
    "emphasis _": "_a " * 5461,
    "strike ~~": "~~a " * 4096,
    "link [": "[" * LIMIT,
    "image ![": "![" * (LIMIT // 2),
    "strong and em *_": "*_a " * 4096,
    "code span `": "x" + "`" * (LIMIT - 1),
    "link destination (": "[a](" * (LIMIT // 4),
    "comment <!--": "x" + "<!--" * (LIMIT // 4 - 1),
    "soft line breaks": "a\n" * (LIMIT // 2),
    "emphasis around links": "*[" * (LIMIT // 2),
}
BOUND_MS = 250  # each parses in a few milliseconds now; the quadratic scans took 0.3–1.1 s

# Block lines whose regex backtracked over a long run: a heading's lazy text before its optional
# closing `#`s retried the line's end at every blank, a paragraph's trailing blanks were stripped by
# `/[ \t]+$/`, and a line's rest read by `.*` stopped at U+2028 and then backtracked over the run
# before it.  Quadratic: 0.1-0.23 s at a document Markdown's 16 KiB, 0.8-2.1 s at 50,000 characters
# and seconds more at a final answer's 100,000, whose text parts the Client renders as Markdown too.
ANSWER_LIMIT = 100_000  # core/answer/final.py MAX_ANSWER_LENGTH
SLOW_LINES: dict[str, str] = {
    "a heading with a blank run": "# a" + " " * (ANSWER_LIMIT - 4) + "b",
    "a paragraph with a blank run": "a" + " " * (ANSWER_LIMIT - 2) + "b",
    "a paragraph with a tab run": "a" + "\t" * (ANSWER_LIMIT - 2) + "b",
    "a list item with a blank run and U+2028": "- " + " " * (ANSWER_LIMIT - 3) + "\u2028",
    "a fence of backticks and U+2028": "`" * (ANSWER_LIMIT - 1) + "\u2028",
    "a fence of tildes and U+2028": "~" * (ANSWER_LIMIT - 2) + "x\u2028",
    "a quote with U+2028": "> " + "a" * (ANSWER_LIMIT - 3) + "\u2028",
}

# ATX headings as CommonMark reads them (its examples 62-79): a closing run of `#`s after a blank
# is not text, also where it is all the heading holds (`### ###` is an empty heading).
HEADINGS: list[tuple[str, str]] = [
    ("# foo", "<h1>foo</h1>"), ("###### foo", "<h6>foo</h6>"), ("####### foo", "<p>####### foo</p>"),
    ("#5 bolt", "<p>#5 bolt</p>"), ("#", "<h1></h1>"), ("# foo #", "<h1>foo</h1>"), ("## foo ##  ", "<h2>foo</h2>"),
    ("# foo#", "<h1>foo#</h1>"), ("### foo ### b", "<h3>foo ### b</h3>"), ("### ###", "<h3></h3>"),
    ("#\t#", "<h1></h1>"), ("  ##   foo   ", "<h2>foo</h2>"), ("    # foo", "<pre># foo</pre>"),
    ("# foo \\#", "<h1>foo #</h1>"), ("#\tfoo\t#\t", "<h1>foo</h1>"), ("# a\u2028b", "<h1>a\u2028b</h1>"),
]


def _run(outputs: list[str], timed: list[str]) -> dict[str, Any]:
    return node_json(f"(async () => {{ {SCRIPT} }})()", json.dumps({"outputs": outputs, "timed": timed}))


def test_awkward_inline_markdown_parses_as_pinned() -> None:
    markdowns = [markdown for markdown, _ in CASES]
    assert list(zip(markdowns, _run(markdowns, [])["outputs"], strict=True)) == CASES


# (name, text, the limit it stays within): inline openers at a document Markdown's limit, block
# lines at a final answer's.
SLOW_TEXTS = [(name, text, LIMIT) for name, text in SLOW_BEFORE.items()] + \
    [(name, text, ANSWER_LIMIT) for name, text in SLOW_LINES.items()]


@pytest.mark.parametrize(("name", "text", "limit"), SLOW_TEXTS, ids=[name for name, _, _ in SLOW_TEXTS])
def test_a_limit_sized_hostile_text_parses_in_linear_time(name: str, text: str, limit: int) -> None:
    assert len(text) <= limit
    milliseconds = _run([], [text])["timed"][0]
    assert milliseconds < BOUND_MS, f"{name}: {milliseconds:.0f} ms"


def test_links_nested_thousands_deep_parse_without_overflowing_the_stack() -> None:
    depth = LIMIT // 5
    text = "[" * depth + "a" + "](b)" * depth
    (output,) = _run([text], [])["outputs"]
    inner = depth - 16  # the nesting bound: 16 links are unwrapped, the ones inside stay text
    assert output == "<p>" + "[" * inner + "a" + "](b)" * inner + "</p>"


def test_atx_headings_read_as_commonmark_reads_them() -> None:
    texts = [text for text, _ in HEADINGS]
    assert list(zip(texts, _run(texts, [])["outputs"], strict=True)) == HEADINGS


# HTML blocks as CommonMark starts and ends them (spec §4.6), dropped whole as react-markdown's
# `skipHtml` drops them; a line that only starts with an inline tag is a paragraph whose tags alone
# are dropped.  The page dropped every line starting with a tag up to the next blank line, and let
# it cut a paragraph short: `<b>Note</b>: keep this` vanished.
HTML_BLOCKS: list[tuple[str, str]] = [
    ("<b>Note</b>: keep this text", "<p>Note: keep this text</p>"),
    ("para\n<b>x</b> y", "<p>para\nx y</p>"),
    ('<a href="x">link</a> text', "<p>link text</p>"),
    ("<em>a</em>\nb", "<p>a\nb</p>"),
    ("para\n<span>\nx", "<p>para\n\nx</p>"),  # a lone inline tag (kind 7) does not interrupt a paragraph
    ("<span>\nx\n\ny", "<p>y</p>"),  # ... and alone on its first line starts a block to the blank line
    ("<custom-el data-x='1'>\ninside\n\nafter", "<p>after</p>"),
    ("<b>\nbold?\n</b>", ""),
    ("para\n<div>\nx", "<p>para</p>"),  # a block-level tag (kind 6) interrupts it
    ("<DIV class=\"a\">\nx\n\ny", "<p>y</p>"),
    ("<div/>\nx\n\ny", "<p>y</p>"),
    ("</td>\nx\n\ny", "<p>y</p>"),
    ("<!-- c -->\nafter", "<p>after</p>"),
    ("<!-- a\nb -->\nafter", "<p>after</p>"),
    ("<?php x ?>\ny", "<p>y</p>"),
    ("<![CDATA[ x ]]>\ny", "<p>y</p>"),
    ("<!DOCTYPE html>\ny", "<p>y</p>"),
    ("<script>\nalert(1)\n</script>\nafter", "<p>after</p>"),
    ("para\n<pre>\ncode\n</pre>", "<p>para</p>"),
    ("<http://x.y> and <a@b.c>", "<p>http://x.y and a@b.c</p>"),
    ("    <div>", "<pre>&lt;div></pre>"),
]
HOSTILE_TAGS: dict[str, str] = {  # a tag that never closes, at a final answer's limit: linear still
    "blanks": "<a" + " " * (ANSWER_LIMIT - 2),
    "attributes": "<a" + " b" * ((ANSWER_LIMIT - 2) // 2),
    "values": "<a" + " b=c" * ((ANSWER_LIMIT - 2) // 4),
    "lone tags": "x\n" + "<span x\n" * ((ANSWER_LIMIT - 2) // 8),
}


def test_html_blocks_start_and_end_as_commonmark_says_and_are_dropped_whole() -> None:
    texts = [text for text, _ in HTML_BLOCKS]
    assert list(zip(texts, _run(texts, [])["outputs"], strict=True)) == HTML_BLOCKS


# Entity and numeric character references (CommonMark 6.2): the characters they name, as text (never
# markup); left as written where the name is unknown, the form broken, or in code.  They were
# shown as written everywhere: `AT&amp;T`.
REFERENCES: list[tuple[str, str]] = [
    ("AT&amp;T &lt;tag&gt;", "<p>AT&amp;T &lt;tag></p>"),
    ("&copy; &#35; &#x22; &#X22; &ngE; &fjlig;", "<p>\u00a9 # \" \" \u2267\u0338 fj</p>"),
    ("&#0; &#xD800; &#1234567; &#x110000;", "<p>\ufffd \ufffd \ufffd \ufffd</p>"),
    ("&#42;foo&#42;", "<p>*foo*</p>"),  # a decoded character is never a delimiter
    ("&lt;b&gt;x&lt;/b&gt;", "<p>&lt;b>x&lt;/b></p>"),  # ... nor a tag: shown as text
    ("&notanentity; &amp &#; &#x; &#12345678; &#xabcdefa;", "<p>&amp;notanentity; &amp;amp &amp;#; &amp;#x; "
     "&amp;#12345678; &amp;#xabcdefa;</p>"),
    ("`&amp;`", "<p><code>&amp;amp;</code></p>"),
    ("    &amp;", "<pre>&amp;amp;</pre>"),
    ("[a&amp;b](u) *x&amp;y*", "<p>a&amp;b <em>x&amp;y</em></p>"),
]
HOSTILE_REFERENCES: dict[str, str] = {
    "ampersands": "&" * ANSWER_LIMIT,
    "open numeric references": "&#" * (ANSWER_LIMIT // 2),
    "long unknown names": ("&" + "a" * 40) * (ANSWER_LIMIT // 41),
}


def test_character_references_are_the_characters_they_name() -> None:
    texts = [text for text, _ in REFERENCES]
    assert list(zip(texts, _run(texts, [])["outputs"], strict=True)) == REFERENCES




def test_the_clients_entity_table_is_the_html5_list() -> None:
    from gateway.client_entities import MODULE, client_entities_module

    assert MODULE.read_text(encoding="utf-8") == client_entities_module(), (
        "gateway/web/src/entities.js is stale: regenerate it with `python -m gateway.client_entities`")


@pytest.mark.parametrize("texts", [HOSTILE_TAGS, HOSTILE_REFERENCES], ids=["tags", "references"])
def test_tags_that_never_close_and_runs_of_ampersands_parse_in_linear_time(texts: dict[str, str]) -> None:
    timed = _run([], list(texts.values()))["timed"]
    for name, milliseconds in zip(texts, timed, strict=True):
        assert milliseconds < BOUND_MS, name
