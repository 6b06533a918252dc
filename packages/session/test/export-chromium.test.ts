import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { decodeHistoryEvent } from '@kode/protocol'
import { exportHtml } from '@kode/session'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'

// The export of a hostile transcript, loaded in a real headless Chromium (Debian's `chromium`
// package, installed here when missing): no script may run and the hostile text must show as
// text. The page and a screenshot are kept under test-output/ (gitignored) for a human to look at.

const output = join(import.meta.dirname, '..', 'test-output')
const page = join(output, 'hostile-transcript.html')
const screenshot = join(output, 'hostile-transcript.png')
let profile: string

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
  writeFileSync(
    page,
    exportHtml(history, {
      title: `</title><script>document.body.setAttribute('data-pwned','title')</script>`,
    }),
  )
}, 600_000)

afterAll(() => {
  if (profile) rmSync(profile, { recursive: true, force: true })
})

describe('hostile transcript in headless Chromium', () => {
  test('no script ran and the hostile text is visible as text', () => {
    const dom = runChromium('--dump-dom', pathToFileURL(page).href)
    // Sanity: Chromium rendered our page.
    expect(dom).toContain('Plain final answer: 1 &lt; 2 &amp;&amp; 3 &gt; 2.')
    // Every hostile script would have marked the document; none did.
    expect(dom).not.toMatch(/<(html|body)[^>]*data-pwned/)
    // Nothing became an element: no script, iframe, form or handler attribute in the live DOM.
    expect(dom).not.toMatch(/<(script|iframe|form|svg)\b/i)
    expect(dom).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i)
    // The hostile markup is there as text.
    expect(dom).toContain("&lt;script&gt;document.body.setAttribute('data-pwned','user')&lt;/script&gt;")
    expect(dom).toContain('&lt;/textarea&gt;&lt;/pre&gt;&lt;script&gt;')
    expect(dom).toContain('$&amp; $1 $$')
    expect(dom).toContain('**bold** _em_ [link](javascript:')
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
