import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, test } from 'vitest'
import { type App, openApp } from '../../src/app.js'
import { denyAll } from '../../src/approvals/decide.js'
import { parseCliArgs } from '../../src/args.js'
import { runDemo } from '../../src/demo.js'
import { createStyle } from '../../src/display/style.js'
import { LineInput } from '../../src/repl/line-input.js'
import { Repl } from '../../src/repl/repl.js'
import { ev } from '../helpers/events.js'
import { REPO, tempDir } from '../process/run-kode.js'

// `--thinking` (or the config's `thinking`) must reach the renderer of the REPL and of the demo.

const opened: App[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((app) => app.close()))
})

/** Opens the app as `kode <argv>` would, offline, with `config` as the user's config file. */
async function open(argv: string[], config?: object): Promise<App> {
  const home = tempDir('kode-thinking-')
  if (config) {
    mkdirSync(join(home, 'xdg/kode'), { recursive: true })
    writeFileSync(join(home, 'xdg/kode/config.json'), JSON.stringify(config))
  }
  const args = parseCliArgs([...argv, '--sessions-dir', join(home, 'sessions')])
  const app = await openApp({ args, env: { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') }, cwd: REPO })
  opened.push(app)
  return app
}

/** What the REPL shows for one finished thinking block. */
/** A terminal that keeps what is written. */
function screen() {
  const chunks: string[] = []
  return { write: (text: string) => void chunks.push(text), columns: 100, text: () => chunks.join('') }
}

function replThinking(app: App): string {
  const output = screen()
  const input = new LineInput(new PassThrough(), new PassThrough() as unknown as NodeJS.WriteStream, '› ')
  const repl = new Repl(app, { input, output, style: createStyle(false), live: false })
  const sessionId = repl.agent.sessionId
  repl.display.handle(ev('thinking_start', { sessionId }))
  repl.display.handle(ev('thinking_delta', { sessionId, content: '**Plan**\nsecond line of thought' }))
  repl.display.handle(ev('thinking_end', { sessionId }))
  input.close()
  return output.text()
}

describe('--thinking', () => {
  test('the REPL collapses finished thinking to its header by default', async () => {
    const shown = replThinking(await open([]))
    expect(shown).toContain('✻ Thought')
    expect(shown).not.toContain('second line of thought')
  })

  test('--thinking expand makes the REPL show the whole thinking', async () => {
    const shown = replThinking(await open(['--thinking', 'expand']))
    expect(shown).toContain('  second line of thought')
  })

  test("the config file's thinking applies, and the flag overrides it", async () => {
    expect(replThinking(await open([], { thinking: 'expand' }))).toContain('second line of thought')
    expect(replThinking(await open(['--thinking', 'collapse'], { thinking: 'expand' }))).not.toContain(
      'second line of thought',
    )
  })

  test('--thinking expand makes the demo show the whole thinking', async () => {
    const app = await open(['demo', '--thinking', 'expand'])
    const output = screen()
    const code = await runDemo(
      app,
      { output, style: createStyle(false), live: false },
      new AbortController().signal,
      denyAll(() => {}),
    )
    expect(code).toBe(0)
    // The body of the scripted model's first thinking block, below its header.
    expect(output.text()).toContain('  The user wants a short tour of the repository.')
  })
})
