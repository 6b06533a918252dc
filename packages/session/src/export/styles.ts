/** The transcript's whole stylesheet, inlined so the file needs nothing else. */
export const TRANSCRIPT_CSS = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa;
  --border: #d1d9e0; --user: #ddf4ff; --assistant: #ffffff; --developer: #fff8c5; --error: #cf222e;
  --error-bg: #ffebe9; --warn: #9a6700; --accent: #0969da; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #151b23; --border: #3d444d;
    --user: #102a43; --assistant: #0d1117; --developer: #2e2a12; --error: #ff7b72; --error-bg: #3c1618;
    --warn: #d29922; --accent: #4493f8; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 980px; margin: 0 auto; padding: 24px 16px 64px; }
h1 { font-size: 1.5em; margin: 0 0 8px; overflow-wrap: anywhere; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0 0 24px;
  color: var(--muted); font-size: 0.9em; }
.meta dt { font-weight: 600; }
.meta dd { margin: 0; overflow-wrap: anywhere; }
.msg { border: 1px solid var(--border); border-radius: 8px; padding: 10px 14px; margin: 12px 0; }
.msg > header { display: flex; gap: 8px; align-items: baseline; font-weight: 600; font-size: 0.85em;
  color: var(--muted); margin-bottom: 4px; }
.msg > header time { margin-left: auto; font-weight: 400; }
.user { background: var(--user); }
.assistant { background: var(--assistant); }
.developer { background: var(--developer); font-size: 0.9em; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--panel); border: 1px solid var(--border);
  border-radius: 6px; padding: 8px 10px; margin: 6px 0; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
details { border: 1px solid var(--border); border-radius: 6px; margin: 8px 0; background: var(--panel); }
details > summary { cursor: pointer; padding: 6px 10px; display: flex; gap: 8px; align-items: baseline; list-style: none; }
details > summary::-webkit-details-marker { display: none; }
details > summary::before { content: "▸"; color: var(--muted); }
details[open] > summary::before { content: "▾"; }
details > summary > code { color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; }
details > .body { padding: 4px 10px 8px; background: var(--bg); border-top: 1px solid var(--border); }
.thinking > .body .text { color: var(--muted); font-style: italic; }
.tool-name { font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.badge { font-size: 0.75em; font-weight: 600; border-radius: 10px; padding: 0 8px; border: 1px solid currentColor; }
.badge.error, .badge.aborted, .badge.missing { color: var(--error); }
.badge.refused { color: var(--warn); }
.badge.mode { color: var(--accent); }
.mode-context { color: var(--muted); border-left: 3px solid var(--border); padding-left: 8px; margin-bottom: 6px; }
details.tool.error, details.tool.aborted, details.tool.missing { border-color: var(--error); }
.label { font-size: 0.8em; font-weight: 600; color: var(--muted); margin: 8px 0 0; }
.usage { font-size: 0.8em; color: var(--muted); margin-top: 6px; }
.notice { margin: 8px 0; padding: 6px 12px; border-radius: 6px; font-size: 0.9em; }
.notice.error { color: var(--error); background: var(--error-bg); }
.notice.interrupt { color: var(--warn); border: 1px dashed var(--warn); }
.notice.stop { color: var(--warn); border: 1px solid var(--warn); }
.notice.task { color: var(--muted); border: 1px solid var(--border); }
.notice.task.interrupted { color: var(--warn); border-color: var(--warn); }
.notice.task.failed { color: var(--error); border-color: var(--error); }
.markdown { overflow-wrap: anywhere; margin: 6px 0; }
.markdown > :first-child { margin-top: 0; }
.markdown > :last-child { margin-bottom: 0; }
.markdown p, .markdown ul, .markdown ol, .markdown blockquote, .markdown table { margin: 6px 0; }
.markdown h1, .markdown h2, .markdown h3, .markdown h4, .markdown h5, .markdown h6 { font-size: 1.05em; margin: 12px 0 4px; }
.markdown h1, .markdown h2 { font-size: 1.15em; }
.markdown ul, .markdown ol { padding-left: 24px; }
.markdown blockquote { padding-left: 12px; border-left: 3px solid var(--border); color: var(--muted); }
.markdown code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, monospace; background: var(--panel); border-radius: 4px; padding: 0 3px; }
.markdown pre code { background: none; padding: 0; font-size: inherit; }
.markdown table { border-collapse: collapse; display: block; overflow-x: auto; }
.markdown th, .markdown td { border: 1px solid var(--border); padding: 3px 8px; }
.markdown a { color: var(--accent); }
.markdown img { max-width: 100%; }
.notice.compaction { color: var(--muted); border: 1px dashed var(--border); }
.sub-session { background: var(--bg); }
.sub-session > .body { border-left: 3px solid var(--accent); }
figure { margin: 8px 0; }
figure img { max-width: 100%; max-height: 480px; border: 1px solid var(--border); border-radius: 6px; }
ol.citations { font-size: 0.85em; color: var(--muted); margin: 0.2em 0 0.6em; overflow-wrap: anywhere; }
figcaption, .image-ref { font-size: 0.8em; color: var(--muted); overflow-wrap: anywhere; }
ul.todos { margin: 4px 0; padding-left: 22px; }
footer.totals { margin-top: 32px; color: var(--muted); font-size: 0.9em; border-top: 1px solid var(--border); padding-top: 8px; }
`
