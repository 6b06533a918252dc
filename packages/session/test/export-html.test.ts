import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeHistoryEvent, type HistoryEvent, type TaskMetadata } from '@kode/protocol'
import { exportHtml } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { generateSession } from '../../../test/history/generate-session.js'
import { callIds, HistoryBuilder } from '../../../test/history/history.js'

const hostile = readFileSync(join(import.meta.dirname, 'fixtures/hostile-transcript.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map(decodeHistoryEvent)

/** What escaping must turn `text` into inside element content. */
const escaped = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  )

/** Every string anywhere in a value. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.flatMap(strings)
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings)
  return []
}

describe('self-contained and safe', () => {
  const page = exportHtml(hostile, { title: '</title><script>alert(1)</script>' })

  test('the page has no script, no external resource and a CSP forbidding both', () => {
    expect(page).not.toMatch(/<script/i)
    expect(page).not.toMatch(/<(link|iframe|object|embed|base|form)\b/i)
    expect(page).not.toMatch(/\s(src|href)="(?!data:image\/)(?!https?:)/i)
    expect(page).not.toMatch(/\ssrc="https?:/i)
    expect(page).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; img-src data:;`,
    )
  })

  test('no element carries an event handler attribute', () => {
    expect(page).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i)
  })

  test('no hostile string of the transcript appears raw', () => {
    const texts = strings(hostile).filter((s) => /[<>"']/.test(s))
    expect(texts.length).toBeGreaterThan(10)
    for (const text of texts) expect(page).not.toContain(text)
  })

  test('every text shown as it is appears escaped, as text', () => {
    // The assistant's text and markdown notes are rendered as markdown: see the next describe.
    const shown = hostile.flatMap((event): string[] => {
      if (!('role' in event)) return event.type === 'error' ? [event.message] : []
      if (event.role === 'tool') return [event.toolName, event.outputText]
      return event.parts.flatMap((part) =>
        part.type === 'text' && event.role === 'assistant'
          ? []
          : 'text' in part
            ? [part.text]
            : part.type === 'tool_call'
              ? [part.name]
              : [],
      )
    })
    expect(shown.length).toBeGreaterThan(10)
    for (const text of shown) expect(page).toContain(escaped(text))
  })

  test('replacement patterns like $& are kept literally', () => {
    expect(page).toContain('$&amp; $1 $$ $` $&#39;')
    expect(page).toContain('x=&quot; $&amp; done')
  })

  test("the assistant's markdown is rendered, and the HTML and script link in it stay text", () => {
    expect(page).toContain('<p><strong>bold</strong> <em>em</em> [link](javascript:document.body')
    expect(page).toContain('&lt;img src=x onerror=&quot;document.body')
    expect(page).toContain('&lt;iframe src=&quot;javascript:')
    expect(page).not.toMatch(/href="javascript/i)
  })

  test('text that leaves a bidi override open is closed where it ends; a URL is kept as it is', () => {
    const b = new HistoryBuilder()
    const url = 'https://x.test/a\u202egnp.exe'
    const page = exportHtml([b.user(`see \u2067\u202ethis`, [{ type: 'image_url', url }])])
    expect(page).toContain('<div class="text">see \u2067\u202ethis\u2069\u202c</div>')
    expect(page).toContain(`<a href="${url}" rel="noopener noreferrer">${url}\u202c</a>`)
    // Open before a newline: closed, since a newline ends it only where white space is kept.
    expect(exportHtml([b.user('a\u202eb\nc')])).toContain('<div class="text">a\u202eb\nc\u202c</div>')
    // Closed already, or no control at all: as it is.
    expect(exportHtml([b.user('a\u202eb\u202c c')])).toContain('<div class="text">a\u202eb\u202c c</div>')
  })

  test('the same input gives the same page', () => {
    expect(exportHtml(hostile, { title: 'x' })).toBe(exportHtml(hostile, { title: 'x' }))
  })
})

describe('content', () => {
  const h = new HistoryBuilder()
  const ask = h.assistant(
    [
      { type: 'thinking_text', text: 'let me think' },
      { type: 'text', text: 'I will look' },
      { type: 'tool_call', id: 'ok', name: 'read_file', argumentsJson: '{"path":"a.ts"}' },
      { type: 'tool_call', id: 'bad', name: 'bash', argumentsJson: '{"cmd":"false"}' },
      { type: 'tool_call', id: 'stop', name: 'bash', argumentsJson: '{}' },
      { type: 'tool_call', id: 'lost', name: 'grep', argumentsJson: '{}' },
    ],
    { usage: { inputTokens: 1000, outputTokens: 200 }, costUsd: 0.5, model: 'model-x', durationMs: 1500 },
  )
  const history: HistoryEvent[] = [
    h.user('Fix the parser\nplease'),
    ask,
    h.result('ok', 'read_file', 'file body'),
    h.result('bad', 'bash', 'exit 1', { status: 'error' }),
    h.result('stop', 'bash', 'stopped', { status: 'aborted' }),
    h.assistant('done', { usage: { inputTokens: 3000, outputTokens: 100 }, costUsd: 0.25 }),
  ]
  const page = exportHtml(history)

  test('times are printed in UTC with a fixed format', () => {
    expect(exportHtml([new HistoryBuilder(Date.UTC(2025, 10, 13, 8, 15, 2)).user('x')])).toContain(
      '<time>2025-11-13 08:15:02 UTC</time>',
    )
  })

  test('a time a Date cannot hold is shown as its number, and the rest still renders', () => {
    const huge = new HistoryBuilder(8.64e15 + 1)
    const page = exportHtml([huge.user('far future'), huge.assistant('still here')], {
      info: { id: 's', createdAt: Number.MAX_VALUE, updatedAt: -1e300, recordCount: 2 },
    })
    expect(page).toContain('<time>8640000000000001 ms (not a valid date)</time>')
    expect(page).toContain('1.7976931348623157e+308 ms (not a valid date)')
    expect(page).toContain('-1e+300 ms (not a valid date)')
    expect(page).toContain('still here')
  })

  test('a year past 9999 keeps the date whole', () => {
    expect(exportHtml([new HistoryBuilder(Date.UTC(10000, 0, 1)).user('x')])).toContain(
      '<time>+010000-01-01 00:00:00 UTC</time>',
    )
  })

  test('the title defaults to the first prompt line', () => {
    expect(page).toContain('<title>Fix the parser</title>')
  })

  test('thinking is a collapsible block', () => {
    expect(page).toContain(
      '<details class="thinking"><summary>Thinking</summary><div class="body"><div class="text">let me think</div>',
    )
  })

  test('each tool call is a collapsible block with its pretty-printed arguments and its result', () => {
    expect(page).toContain('<details class="tool success"><summary><span class="tool-name">read_file</span>')
    expect(page).toContain(
      '<pre>{\n  &quot;path&quot;: &quot;a.ts&quot;\n}</pre><p class="label">Result</p><pre>file body</pre>',
    )
  })

  test('pretty-printed arguments keep every value as the model wrote it', () => {
    const b = new HistoryBuilder()
    const call = b.calls(['write_file'])
    const part = call.parts[0]!
    if (part.type === 'tool_call')
      part.argumentsJson =
        '{"id": 12345678901234567890, "big":1e400,"price" :1.50,"k":1,"k":2,"s":"\\u00e9 \\"{[,:"  ,"e":{ },"l":[ ],"n":[1,[true,null]]}'
    const page = exportHtml([b.user('go'), call])
    const shown = [
      '{',
      '  "id": 12345678901234567890,',
      '  "big": 1e400,',
      '  "price": 1.50,',
      '  "k": 1,',
      '  "k": 2,',
      '  "s": "\\u00e9 \\"{[,:",',
      '  "e": {},',
      '  "l": [],',
      '  "n": [',
      '    1,',
      '    [',
      '      true,',
      '      null',
      '    ]',
      '  ]',
      '}',
    ].join('\n')
    expect(page).toContain(`<pre>${escaped(shown)}</pre>`)
  })

  test('arguments that are not JSON are shown as they are', () => {
    const b = new HistoryBuilder()
    const call = b.calls(['bash'])
    const part = call.parts[0]!
    if (part.type === 'tool_call') part.argumentsJson = '{"cmd": "ls",'
    expect(exportHtml([b.user('go'), call])).toContain(`<pre>${escaped('{"cmd": "ls",')}</pre>`)
  })

  test('thinking the provider redacted is marked where it was, its opaque data not shown', () => {
    const b = new HistoryBuilder()
    const signature = (redacted: boolean) => ({
      type: 'thinking_signature' as const,
      signature: redacted ? 'EmwKAhgBEgy3va3pzix/opaque' : 'sig-of-visible-thinking',
      format: 'anthropic' as const,
      model: 'claude-x',
      ...(redacted ? { redacted } : {}),
    })
    const page = exportHtml([
      b.user('go'),
      b.assistant([
        { type: 'thinking_text', text: 'first thought' },
        signature(false),
        signature(true),
        { type: 'text', text: 'answer' },
      ]),
    ])
    expect(page).toContain(
      '<div class="text">first thought</div></div></details><p class="label thinking-redacted">Thinking redacted by the provider</p><div class="markdown"><p>answer</p>',
    )
    expect(page).not.toContain('opaque')
    expect(page).not.toContain('sig-of-visible-thinking')
  })

  test('failed, interrupted and missing results are marked', () => {
    expect(page).toContain('<details class="tool error">')
    expect(page).toContain('<span class="badge error">error</span>')
    expect(page).toContain('<details class="tool aborted">')
    expect(page).toContain('<span class="badge aborted">interrupted</span>')
    expect(page).toContain('<details class="tool missing">')
    expect(page).toContain('<span class="badge missing">no result</span>')
  })

  test('usage and cost are shown per response and in total', () => {
    expect(page).toContain('model-x · 1,000 in · 200 out · $0.5000 · 1.5 s')
    expect(page).toContain('3,000 in · 100 out · $0.2500')
    expect(page).toContain('Total: 2 responses · 4,000 in · 300 out · $0.7500')
  })

  test("a tool call's one-line preview cut at its limit never splits an emoji", () => {
    const b = new HistoryBuilder()
    const call = b.calls(['write_file'])
    const part = call.parts[0]!
    // `{"text":"` is 9 units: the emoji's two units straddle the cut at 99.
    if (part.type === 'tool_call') part.argumentsJson = `{"text":"${'a'.repeat(89)}😀${'b'.repeat(20)}"}`
    const page = exportHtml([b.user('go'), call])
    expect(page).toContain(`<code>{&quot;text&quot;:&quot;${'a'.repeat(89)}…</code>`)
    expect(page).not.toMatch(/\p{Cs}/u)
  })

  test('a tool result that answers no call is shown on its own', () => {
    const b = new HistoryBuilder()
    expect(exportHtml([b.result('ghost', 'grep', 'orphan output')])).toContain(
      '<span class="tool-name">grep</span></summary><div class="body"><p class="label">Result</p><pre>orphan output</pre>',
    )
  })
})

describe('markdown', () => {
  const b = new HistoryBuilder()
  const render = (text: string) => exportHtml([b.assistant(text)])

  test('headings, lists, emphasis, code, tables and quotes become markup', () => {
    const page = render(
      '## Plan\n\n- read `a.ts`\n- **fix** it\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n> note\n\n```ts\nconst x = 1 < 2\n```',
    )
    expect(page).toContain('<h2>Plan</h2>')
    expect(page).toContain('<li>read <code>a.ts</code></li>\n<li><strong>fix</strong> it</li>')
    expect(page).toContain('<td>1</td>')
    expect(page).toContain('<blockquote>\n<p>note</p>\n</blockquote>')
    expect(page).toContain('<pre><code class="language-ts">const x = 1 &lt; 2\n</code></pre>')
  })

  test('HTML in the markdown, inline or as a block, is shown as text', () => {
    const page = render('<div onclick="x()">hi</div>\n\ntext <b onmouseover="y()">bold</b>')
    expect(page).toContain('&lt;div onclick=&quot;x()&quot;&gt;hi&lt;/div&gt;')
    expect(page).toContain('text &lt;b onmouseover=&quot;y()&quot;&gt;bold&lt;/b&gt;')
    expect(page).not.toMatch(/<(div|b) on/)
  })

  test('only web and mail links become links; any other scheme stays literal', () => {
    const page = render(
      '[web](https://x.test/a) [mail](mailto:a@x.test) [js](javascript:alert(1)) [vb](vbscript:x) [file](file:///etc/passwd) [data](data:text/html;base64,PHNjcmlwdD4=) [rel](../secrets)',
    )
    expect(page).toContain('<a href="https://x.test/a" rel="noopener noreferrer">web</a>')
    expect(page).toContain('<a href="mailto:a@x.test" rel="noopener noreferrer">mail</a>')
    for (const literal of [
      '[js](javascript:alert(1))',
      '[vb](vbscript:x)',
      '[file](file:///etc/passwd)',
      '[rel](../secrets)',
    ])
      expect(page).toContain(literal)
    expect(page.match(/<a /g)).toHaveLength(2)
  })

  test('a data: image URL is only ever an image, never a link to open', () => {
    // An SVG opened as a document runs its script: a link to one is a script link.
    const svg = 'data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+'
    const page = render(
      `[inline](${svg}) <${svg}> [ref][r] [upper](DATA:image/png;base64,AAAA) [web](https://x.test)\n\n[r]: ${svg}`,
    )
    expect(page).not.toMatch(/href="data:/i)
    expect(page.match(/<a /g)).toHaveLength(1)
    expect(page).toContain(`[inline](${svg})`)
    expect(page).toContain(`&lt;${svg}&gt;`)
    expect(page).toContain(`[ref](${svg})`)
    expect(page).toContain('[upper](DATA:image/png;base64,AAAA)')
    expect(render(`![still an image](${svg})`)).toContain(`<img alt="still an image" src="${svg}">`)
  })

  test('an image loads only from inline data; a web image is linked, never loaded', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo='
    const page = render(`![chart](${png}) ![pixel](https://tracker.test/p.png)`)
    expect(page).toContain(`<img alt="chart" src="${png}">`)
    expect(page).toContain(
      'image (not loaded): <a href="https://tracker.test/p.png" rel="noopener noreferrer">pixel</a>',
    )
    expect(page).not.toMatch(/src="https?:/)
  })

  test("a tool's markdown note is rendered too; prompts and thinking stay as typed", () => {
    const page = exportHtml([
      b.user('**not bold**'),
      b.assistant([{ type: 'thinking_text', text: '*not em*' }]),
      b.result('c', 'notes', 'ok', { uiExtra: { type: 'markdown', markdown: '**noted**' } }),
    ])
    expect(page).toContain('<div class="text">**not bold**</div>')
    expect(page).toContain('<div class="text">*not em*</div>')
    expect(page).toContain('<strong>noted</strong>')
  })
})

describe('cost and outcome', () => {
  const b = new HistoryBuilder()
  const metadata = (main: TaskMetadata): HistoryEvent => ({
    ...b.taskMetadata(0),
    metadata: { main, subAgents: [] },
  })

  test('a model without prices shows its cost as unknown, not $0.0000', () => {
    const page = exportHtml([
      b.user('hi'),
      b.assistant('hello', { usage: { inputTokens: 10, outputTokens: 2 }, model: 'local-llm' }),
      metadata({ usage: { inputTokens: 10, outputTokens: 2 }, turnCount: 1 }),
    ])
    expect(page).toContain('local-llm · 10 in · 2 out · cost unknown')
    expect(page).toContain('Task finished · 1 turn · 10 in · 2 out · cost unknown')
    expect(page).toContain('Total: 1 response · 10 in · 2 out · cost unknown')
    expect(page).not.toContain('$0.0000')
  })

  test('a total over priced and unpriced responses says what it lacks', () => {
    const page = exportHtml([
      b.assistant('a', { usage: { inputTokens: 10 }, costUsd: 0.5 }),
      b.assistant('b', { usage: { inputTokens: 10 } }),
    ])
    expect(page).toContain('Total: 2 responses · 20 in · $0.5000 + unknown (1 of 2 responses unpriced)')
  })

  test('a free model still shows $0.0000', () => {
    expect(exportHtml([b.assistant('a', { usage: { inputTokens: 1 }, costUsd: 0 })])).toContain(
      'Total: 1 response · 1 in · $0.0000',
    )
  })

  test("an interrupted task's closing line says interrupted; the next task's says finished", () => {
    const page = exportHtml([
      b.user('count'),
      b.assistant('1, 2,', { stopReason: 'aborted', usage: { inputTokens: 5 }, costUsd: 0.1 }),
      b.interrupt(),
      metadata({ turnCount: 1, costUsd: 0.1 }),
      b.user('again'),
      b.assistant('done', { usage: { inputTokens: 5 }, costUsd: 0.1 }),
      metadata({ turnCount: 1, costUsd: 0.1 }),
    ])
    expect(page).toContain('<div class="notice task interrupted">Task interrupted · 1 turn · $0.1000</div>')
    expect(page).toContain('<div class="notice task finished">Task finished · 1 turn · $0.1000</div>')
  })
})

describe('compaction', () => {
  test('the whole history is shown, with a compaction marker holding the summary where it happened', () => {
    const b = new HistoryBuilder()
    const old = b.user('the old request')
    const kept = b.user('the kept request')
    const page = exportHtml([
      old,
      b.assistant('old answer'),
      kept,
      b.compaction('Summary <of> the old part', kept.id),
    ])
    expect(page).toContain('the old request')
    expect(page).toContain('old answer')
    expect(page).toContain('Context compacted (threshold): about 9000 → 1200 tokens')
    expect(page).toContain('Summary &lt;of&gt; the old part')
    expect(page.indexOf('the kept request')).toBeLessThan(page.indexOf('Context compacted'))
  })

  test('a compaction that saved nothing is a notice of its own, not an error or interrupt of the task', () => {
    const b = new HistoryBuilder()
    const attempt = (reason: 'threshold' | 'manual') => ({ reason, tokensBefore: 9000 })
    const page = exportHtml([
      b.user('first'),
      { ...b.error('The summary failed: <down>'), compaction: attempt('threshold') },
      b.assistant('answer'),
      b.taskMetadata(1),
      { ...b.interrupt(), compaction: attempt('manual') },
      b.user('second'),
      b.assistant('answer'),
      b.taskMetadata(1),
    ])
    expect(page).toContain(
      '<div class="notice compaction">Context not compacted (threshold, about 9000 tokens). The summary failed: &lt;down&gt;</div>',
    )
    expect(page).toContain(
      '<div class="notice compaction">Context not compacted (manual, about 9000 tokens). The user interrupted the summary.</div>',
    )
    expect(page).not.toContain('Error:')
    expect(page).not.toContain('Interrupted by the user')
    expect(page.match(/Task finished/g)).toHaveLength(2)
  })

  test("the summary request's retries show before the compaction, as a turn's retries do", () => {
    const b = new HistoryBuilder()
    const kept = b.user('the kept request')
    const retries = ['Overloaded <529> (retrying in 1000 ms)', 'Overloaded (retrying in 2000 ms)']
    const page = exportHtml([
      b.user('first'),
      b.assistant('answer'),
      kept,
      { ...b.compaction('Summary', kept.id), retries },
      {
        ...b.error('The summary failed'),
        compaction: { reason: 'manual', tokensBefore: 9000, retries: [retries[1]!] },
      },
    ])
    const saved = page.indexOf('Context compacted (threshold)')
    const unsaved = page.indexOf('Context not compacted (manual')
    const notices = [...page.matchAll(/<div class="notice error">Error: ([^<]*) \(retryable\)<\/div>/g)]
    expect(
      notices.map((m) => [
        m[1],
        m.index < saved ? 'before saved' : m.index < unsaved ? 'before unsaved' : 'after',
      ]),
    ).toEqual([
      ['Overloaded &lt;529&gt; (retrying in 1000 ms)', 'before saved'],
      ['Overloaded (retrying in 2000 ms)', 'before saved'],
      ['Overloaded (retrying in 2000 ms)', 'before unsaved'],
    ])
    // Retries fail nothing: the task was not marked failed by them.
    expect(page).not.toContain('Task failed')
  })
})

describe('images', () => {
  const b = new HistoryBuilder()
  const png = 'data:image/png;base64,iVBORw0KGgo='

  test('inline data images are embedded; web images are linked, never loaded', () => {
    const page = exportHtml([
      b.user('look', [
        { type: 'image_url', url: png },
        { type: 'image_url', url: 'https://x.test/a.png' },
      ]),
    ])
    expect(page).toContain(`<img alt="image" src="${png}">`)
    expect(page).toContain('image (not loaded): <a href="https://x.test/a.png" rel="noopener noreferrer">')
  })

  const signed = 'https://user:pw@bucket.test/a.png?X-Amz-Signature=abc123&sig=def456#token=ghi789'

  test("a web image's URL is shown without its credentials, query and fragment by default", () => {
    const page = exportHtml([
      b.user('look', [{ type: 'image_url', url: signed }]),
      b.assistant(`![chart](${signed})`),
    ])
    for (const secret of ['user:pw', 'abc123', 'def456', 'ghi789', 'X-Amz-Signature']) {
      expect(page).not.toContain(secret)
    }
    expect(page).toContain(
      'image (not loaded): <a href="https://bucket.test/a.png" rel="noopener noreferrer">https://bucket.test/a.png</a>',
    )
    expect(page).toContain(
      'image (not loaded): <a href="https://bucket.test/a.png" rel="noopener noreferrer">chart</a>',
    )
  })

  test('an image reference that is not a web URL is shown without its query either', () => {
    const page = exportHtml([b.user('look', [{ type: 'image_url', url: 'gs://bucket/a.png?token=abc123' }])])
    expect(page).not.toContain('abc123')
    expect(page).toContain('image: gs://bucket/a.png')
  })

  test('an image reference that is not a web URL is cut only when long, never inside a character', () => {
    const long = `blob:${'😀'.repeat(40)}`
    const page = exportHtml([
      b.user('look', [
        { type: 'image_url', url: 'ftp://x.test/a.png' },
        { type: 'image_url', url: long },
      ]),
    ])
    expect(page).toContain('<p class="image-ref">image: ftp://x.test/a.png</p>')
    expect(page).toContain(`<p class="image-ref">image: blob:${'😀'.repeat(29)}…</p>`)
    expect(page).not.toMatch(/\p{Cs}/u)
  })

  test("imageUrls: 'as-given' shows a web image's URL as the history has it", () => {
    const page = exportHtml(
      [b.user('look', [{ type: 'image_url', url: signed }]), b.assistant(`![chart](${signed})`)],
      {
        imageUrls: 'as-given',
      },
    )
    const shown = signed.replaceAll('&', '&amp;')
    expect(page).toContain(`image (not loaded): <a href="${shown}" rel="noopener noreferrer">${shown}</a>`)
    expect(page).toContain(`image (not loaded): <a href="${shown}" rel="noopener noreferrer">chart</a>`)
  })

  test('image files are embedded through resolveImage, else named by path', () => {
    const file = { type: 'image_file' as const, path: 'shots/a.png', mimeType: 'image/png' }
    const history = [b.assistant([{ type: 'text', text: 'made it' }, file])]
    expect(exportHtml(history)).toContain('image file: shots/a.png (image/png)')
    expect(exportHtml(history, { resolveImage: () => png })).toContain(`<img alt="shots/a.png" src="${png}">`)
  })

  test('a resolver answer that is not a data image is not embedded', () => {
    const file = { type: 'image_file' as const, path: 'a.png', mimeType: 'image/png' }
    const page = exportHtml([b.user('x', [file])], { resolveImage: () => 'https://tracker.test/pixel.png' })
    expect(page).not.toContain('tracker.test')
    expect(page).toContain('image file: a.png')
  })
})

describe('sub-agent sessions', () => {
  test('a linked session is nested under the tool call that ran it, and counted in the total', () => {
    const h = new HistoryBuilder()
    const ask = h.calls(['task'], { usage: { inputTokens: 10, outputTokens: 1 }, costUsd: 1 })
    const link = h.result(callIds(ask)[0]!, 'task', 'summary', {
      uiExtra: { type: 'session', sessionId: 'kid' },
    })
    const c = new HistoryBuilder(9)
    const child = [
      c.user('sub question'),
      c.assistant('sub answer', { usage: { inputTokens: 5, outputTokens: 2 }, costUsd: 2 }),
    ]
    const page = exportHtml([ask, link], { subSessions: new Map([['kid', child]]) })
    const nested = page.indexOf('<details class="sub-session"><summary>Sub-agent session <code>kid</code>')
    expect(nested).toBeGreaterThan(page.indexOf('<pre>summary</pre>'))
    expect(page.indexOf('sub answer')).toBeGreaterThan(nested)
    expect(page).toContain('Total: 2 responses · 15 in · 3 out · $3.00')
  })

  // A sub-agent that paused for approval is linked by its parent's approval request, before the
  // call that runs it has a result; a new user message that denies its call gives that call an
  // error result linking nothing. Its work happened and was paid for either way.
  test.each([
    ['while the parent waits for the decision', false],
    ['after a new message denied the call, its result linking nothing', true],
  ])(
    'a sub-agent paused for approval is nested under the call that runs it, and counted: %s',
    (_, denied) => {
      const h = new HistoryBuilder()
      const ask = h.calls(['task'], { usage: { inputTokens: 10, outputTokens: 1 }, costUsd: 1 })
      const call = callIds(ask)[0]!
      const request: HistoryEvent = {
        type: 'approval_request',
        id: 'ar',
        createdAt: ask.createdAt + 1,
        toolCallId: 'k1',
        toolName: 'write_file',
        arguments: '{}',
        sessionId: 'kid',
        subAgentCall: { toolCallId: call, sessionId: 'kid' },
      }
      const history = denied
        ? [ask, request, h.result(call, 'task', 'denied by the user', { status: 'error' })]
        : [ask, request]
      const c = new HistoryBuilder(9)
      const child = [
        c.user('sub question'),
        c.assistant('sub answer', { usage: { inputTokens: 5, outputTokens: 2 }, costUsd: 2 }),
      ]
      const page = exportHtml(history, { subSessions: new Map([['kid', child]]) })
      const nested = page.indexOf('<details class="sub-session"><summary>Sub-agent session <code>kid</code>')
      expect(nested).toBeGreaterThan(page.indexOf('<span class="tool-name">task</span>'))
      expect(page.indexOf('sub answer')).toBeGreaterThan(nested)
      expect(page).toContain('Total: 2 responses · 15 in · 3 out · $3.00')
    },
  )

  test('a long generated session with sub-agents renders, every sub-agent once', () => {
    const { history, subSessions } = generateSession({ seed: 11, tasks: 40, sessionId: 'g' })
    const page = exportHtml(history, { subSessions })
    for (const id of subSessions.keys()) {
      expect(page.split(`Sub-agent session <code>${id}</code>`)).toHaveLength(2)
    }
  })
})
