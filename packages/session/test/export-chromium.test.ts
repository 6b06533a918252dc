import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { decodeHistoryEvent, type HistoryEvent } from '@kode/protocol'
import { exportHtml } from '@kode/session'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { HistoryBuilder } from '../../../test/history/history.js'

// The export of a hostile transcript, loaded in a real headless Chromium (Debian's `chromium`
// package, installed here when missing): no script may run and the hostile text must show as
// text. The page's CSP alone would block scripts, so escaping is checked on a copy without the
// CSP too, and a control page shows that a script that does get in is caught. The pages and a
// screenshot are kept under test-output/ (gitignored) for a human to look at.

const output = join(import.meta.dirname, '..', 'test-output')
const page = join(output, 'hostile-transcript.html')
/** The same export without its Content-Security-Policy, plus the visibility probe below. */
const unprotected = join(output, 'hostile-transcript-no-csp.html')
const screenshot = join(output, 'hostile-transcript.png')
let profile: string
let html: string

const CSP_META = /<meta http-equiv="Content-Security-Policy"[^>]*>/
/** What every hostile payload does when it runs; also what the control script does. */
const PWNED = /<(html|body)[^>]*data-pwned/
const CONTROL = `<script>document.body.setAttribute('data-pwned','control')</script>`
/**
 * Opens every collapsed block, then records the text a reader sees (`innerText` leaves out what is
 * hidden: closed details, `display: none`) as base64 on the root element, and removes itself.
 */
const PROBE = `<script>
for (const details of document.querySelectorAll('details')) details.open = true
const seen = new TextEncoder().encode(document.body.innerText)
document.documentElement.setAttribute('data-visible', btoa(String.fromCharCode(...seen)))
document.currentScript.remove()
</script>`
const withScript = (markup: string, script: string) => markup.replace('</body>', `${script}</body>`)

/** Finds chromium, installing Debian's package when it is missing; fails loudly if it cannot. */
function ensureChromium(): string {
  const which = () => spawnSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).stdout.trim()
  if (which()) return which()
  const install = () =>
    spawnSync('apt-get', ['install', '-y', 'chromium'], {
      encoding: 'utf8',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    })
  let result = install()
  if (result.status !== 0) {
    spawnSync('apt-get', ['update'], { encoding: 'utf8' })
    result = install()
  }
  const path = which()
  if (!path) {
    throw new Error(
      `chromium is required by this test and could not be installed with apt-get:\n${result.stdout}${result.stderr}`,
    )
  }
  return path
}

let chromium: string
function runChromium(...args: string[]): string {
  return execFileSync(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      ...args,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 30_000 },
  )
}

beforeAll(() => {
  chromium = ensureChromium()
  profile = mkdtempSync(join(tmpdir(), 'kode-chromium-'))
  const history = readFileSync(join(import.meta.dirname, 'fixtures/hostile-transcript.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(decodeHistoryEvent)
  mkdirSync(output, { recursive: true })
  html = exportHtml(history, {
    title: `</title><script>document.body.setAttribute('data-pwned','title')</script>`,
  })
  expect(html).toMatch(CSP_META)
  writeFileSync(page, html)
  writeFileSync(unprotected, withScript(html.replace(CSP_META, ''), PROBE))
}, 600_000)

/** Loads a page and returns its DOM after its scripts ran. */
const domOf = (file: string) => runChromium('--dump-dom', pathToFileURL(file).href)

/** Writes `markup` to a scratch page and returns its DOM after its scripts ran. */
function domOfMarkup(name: string, markup: string): string {
  const file = join(output, name)
  writeFileSync(file, markup)
  return domOf(file)
}

/** Every hostile piece of markup that must be in the page as text. */
const HOSTILE_TEXTS = [
  "<script>document.body.setAttribute('data-pwned','user')</script>",
  `<!-- --><img src=x onerror="document.body.setAttribute('data-pwned','developer')">`,
  "</div></details><script>document.body.setAttribute('data-pwned','thinking')</script>",
  "[link](javascript:document.body.setAttribute('data-pwned','link'))",
  "</pre><script>document.body.setAttribute('data-pwned','args')</script>",
  "</textarea></pre><script>document.body.setAttribute('data-pwned','output')</script>",
  `<iframe src="javascript:document.body.setAttribute('data-pwned','iframe')"></iframe>`,
  '<style>body{display:none}</style>visible',
  `<svg onload="document.body.setAttribute('data-pwned','error')">`,
  '$& $1 $$',
]

afterAll(() => {
  if (profile) rmSync(profile, { recursive: true, force: true })
})

// Each test starts Chromium at least once: seconds each on a loaded machine.
describe('hostile transcript in headless Chromium', { timeout: 120_000 }, () => {
  test('control: a script that gets into the page marks it, unless the CSP blocks it', () => {
    // Without this, "not pwned" below could pass because scripts never run in this setup.
    expect(domOfMarkup('control-no-csp.html', withScript(html.replace(CSP_META, ''), CONTROL))).toMatch(PWNED)
    expect(domOfMarkup('control-csp.html', withScript(html, CONTROL))).not.toMatch(PWNED)
  })

  test('no script ran, with the CSP', () => {
    const dom = domOf(page)
    // Sanity: Chromium rendered our page.
    expect(dom).toContain('Plain final answer: 1 &lt; 2 &amp;&amp; 3 &gt; 2.')
    // Every hostile script would have marked the document; none did.
    expect(dom).not.toMatch(PWNED)
  })

  test('no script ran and nothing became an element, without the CSP: escaping alone holds', () => {
    const dom = domOf(unprotected)
    expect(dom).toContain('Plain final answer: 1 &lt; 2 &amp;&amp; 3 &gt; 2.')
    expect(dom).not.toMatch(PWNED)
    // No script, iframe, form or svg element and no handler attribute in the live DOM (the probe
    // removed itself). The one <style> is the page's own; the one <img> is the user's data image
    // (an SVG shown as an image, whose own script cannot run).
    expect(dom).not.toMatch(/<(script|iframe|form|svg)\b/i)
    expect(dom.match(/<style\b/gi)).toHaveLength(1)
    expect(dom.match(/<img [^>]*>/gi)).toEqual([expect.stringMatching(/^<img alt="image" src="data:image\//)])
    expect(dom).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i)
  })

  test('with every collapsible block open, the hostile markup is visible as text', () => {
    const dom = domOf(unprotected)
    const encoded = /data-visible="([A-Za-z0-9+/=]*)"/.exec(dom)?.[1]
    expect(encoded, 'the probe ran').toBeDefined()
    const visible = Buffer.from(encoded!, 'base64').toString('utf8')
    for (const text of HOSTILE_TEXTS) expect(visible).toContain(text)
    // The blocks were closed: the thinking and the tool output only show once opened.
    expect(html).not.toMatch(/<details[^>]*\sopen/)
  })

  test("the assistant's markdown renders as elements, and the markup inside it stays text", () => {
    const dom = domOf(unprotected)
    expect(dom).toContain('<strong>bold</strong> <em>em</em>')
    expect(dom).not.toMatch(/href="javascript/i)
  })

  test('a markdown answer full of hostile markup renders safely', () => {
    const markdown = [
      '## Result',
      '',
      '- **fixed** `parse()`',
      '- see [docs](https://kode.test/docs)',
      '',
      '| a | b |',
      '| - | - |',
      '| 1 | 2 |',
      '',
      `<div onmouseover="document.body.setAttribute('data-pwned','md-block')">block</div>`,
      '',
      `inline <img src=x onerror="document.body.setAttribute('data-pwned','md-img')"> and [js](javascript:document.body.setAttribute('data-pwned','md-link'))`,
      '',
      `![pixel](https://tracker.test/p.png) <script>document.body.setAttribute('data-pwned','md-script')</script>`,
      '',
      '```html',
      `<script>document.body.setAttribute('data-pwned','md-fence')</script>`,
      '```',
    ].join('\n')
    const answer = decodeHistoryEvent(
      JSON.stringify({
        v: 1,
        id: 'md1',
        createdAt: 1763000000000,
        role: 'assistant',
        parts: [{ type: 'text', text: markdown }],
      }),
    )
    const page = withScript(exportHtml([answer]).replace(CSP_META, ''), PROBE)
    const dom = domOfMarkup('markdown-no-csp.html', page)
    expect(dom).not.toMatch(PWNED)
    expect(dom).toContain('<h2>Result</h2>')
    expect(dom).toContain('<li><strong>fixed</strong> <code>parse()</code></li>')
    expect(dom).toContain('<a href="https://kode.test/docs" rel="noopener noreferrer">docs</a>')
    expect(dom).toContain('<td>1</td>')
    expect(dom).not.toMatch(/<(script|iframe|form|svg|img)\b/i)
    expect(dom).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i)
    const encoded = /data-visible="([A-Za-z0-9+/=]*)"/.exec(dom)?.[1]
    const visible = Buffer.from(encoded!, 'base64').toString('utf8')
    for (const text of [
      `<div onmouseover="document.body.setAttribute('data-pwned','md-block')">block</div>`,
      `<img src=x onerror="document.body.setAttribute('data-pwned','md-img')">`,
      `[js](javascript:document.body.setAttribute('data-pwned','md-link'))`,
      `<script>document.body.setAttribute('data-pwned','md-fence')</script>`,
      'image (not loaded): pixel',
    ])
      expect(visible).toContain(text)
  })

  test('bidi controls in a name or a message reorder only that text', () => {
    const RLO = '\u202e'
    const RLI = '\u2067'
    const b = new HistoryBuilder(1763000000000)
    const approval: HistoryEvent = {
      type: 'approval_request',
      id: 'ap1',
      createdAt: 1763000000001,
      toolCallId: 'c1',
      toolName: `evil${RLO}gnp.exe`,
      arguments: '{"path":"a.txt"}',
    }
    const decision: HistoryEvent = {
      type: 'approval_decision',
      id: 'ap2',
      createdAt: 1763000000002,
      toolCallId: 'c1',
      toolName: `evil${RLO}gnp.exe`,
      approved: false,
      reason: 'no',
    }
    const history = [b.user('go'), approval, decision, b.error(`bad ${RLI}${RLO}thing`, true)]
    /**
     * Writes, for each notice, its characters in the order a reader sees them
     * (left to right, line by line), measured from the laid-out text.
     */
    const ORDER = `<script>
const order = (el) => {
  const chars = []
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT)
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const range = document.createRange()
      range.setStart(node, i)
      range.setEnd(node, i + 1)
      const box = range.getBoundingClientRect()
      if (box.width > 0) chars.push([Math.round(box.top), box.left, node.data[i]])
    }
  }
  chars.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  return chars.map((c) => c[2]).join('')
}
const seen = [...document.querySelectorAll('.notice')].map(order)
document.documentElement.setAttribute('data-order', btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(seen)))))
document.currentScript.remove()
</script>`
    const dom = domOfMarkup('bidi-no-csp.html', withScript(exportHtml(history).replace(CSP_META, ''), ORDER))
    const encoded = /data-order="([A-Za-z0-9+/=]*)"/.exec(dom)?.[1]
    expect(encoded, 'the probe ran').toBeDefined()
    const seen: string[] = JSON.parse(Buffer.from(encoded!, 'base64').toString('utf8'))
    // The name itself shows reversed, as its author meant; what follows it reads as written.
    expect(seen).toEqual([
      'Approval requested for evilexe.png {"path":"a.txt"}',
      'Denied by the user: evilexe.png (no)',
      'Error: bad gniht (retryable)',
    ])
  })

  test('a screenshot of the page is a real rendering', () => {
    runChromium(`--screenshot=${screenshot}`, '--window-size=1200,2000', pathToFileURL(page).href)
    const png = readFileSync(screenshot)
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
    // IHDR: width and height as big-endian 32-bit integers.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1200, 2000])
    expect(statSync(screenshot).size).toBeGreaterThan(20_000)
  })
})
