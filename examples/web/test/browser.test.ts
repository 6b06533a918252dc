import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool } from '@kode/core'
import { createClient } from '@kode/providers'
import { createSseTestServer, type SseTestServer, scriptedResponse } from '@kode/providers/testing'
import { createMemorySessionStore } from '@kode/session'
import { Type } from '@sinclair/typebox'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { launchChromium } from '../../../test/runtimes/chromium.js'
import { saveNoteTool } from '../src/note-tool.js'
import {
  FAN_OUT_SESSION,
  FIXTURE_SESSION,
  SHARED_ID_SESSION,
  writeFanOutSession,
  writeFixtureSession,
  writeSharedIdSession,
} from './fixture-session.js'
import { useApps } from './helpers.js'
import { startWriterModel, type WriterModel } from './writer-model.js'

// The page in a real browser (Debian's Chromium through playwright-core), one browser for the
// whole file. Each test gets its own server and a fresh browser context.

let browser: Browser
const output = join(import.meta.dirname, '..', 'test-output')
const baseline = join(import.meta.dirname, 'screenshots', 'transcript.png')

beforeAll(async () => {
  browser = await launchChromium()
  mkdirSync(output, { recursive: true })
}, 60_000)
afterAll(async () => {
  await browser?.close()
})
const serve = useApps()

/**
 * A page of a fresh context, recording CSP violations and uncaught page errors. `before` runs on
 * the page before it loads (to route its requests).
 */
async function openPage(
  url: string,
  before?: (page: Page) => Promise<unknown>,
): Promise<Page & { problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } })
  const page = (await context.newPage()) as Page & { problems: string[] }
  await before?.(page)
  page.problems = []
  page.on('pageerror', (error) => page.problems.push(`pageerror: ${error.message}`))
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      ;(window as unknown as { __violations: string[] }).__violations ??= []
      ;(window as unknown as { __violations: string[] }).__violations.push(
        `${e.violatedDirective} ${e.blockedURI}`,
      )
    })
  })
  await page.goto(url)
  return page
}

const transcriptText = (page: Page) => page.locator('#transcript').innerText()
async function send(page: Page, text: string): Promise<void> {
  await page.fill('#input', text)
  await page.click('#send')
}
const idle = (page: Page) =>
  page.waitForSelector('#status[data-state="idle"]', { state: 'attached', timeout: 30_000 })

describe('the page', () => {
  test('a prompt streams its answer into the transcript, markdown rendered', async () => {
    const { url } = await serve()
    const page = await openPage(url)
    // Records the length of the answer after every change the page makes to it.
    await page.evaluate(() => {
      const seen: number[] = []
      ;(window as unknown as { __seen: number[] }).__seen = seen
      new MutationObserver(() => {
        const text = document.querySelector('#transcript .text')?.textContent
        if (text && text.length !== seen.at(-1)) seen.push(text.length)
      }).observe(document.querySelector('#transcript')!, {
        childList: true,
        subtree: true,
        characterData: true,
      })
    })
    await send(page, 'hello')
    await idle(page)
    expect(await page.locator('#transcript .user').innerText()).toBe('hello')
    expect(await page.locator('#transcript .text strong').first().innerText()).toBe('scripted offline model')
    expect(await transcriptText(page)).toContain('to talk to a real model.')
    // Streamed: the page showed the answer growing, piece by piece, before it was whole.
    const seen = await page.evaluate(() => (window as unknown as { __seen: number[] }).__seen)
    expect(seen.length).toBeGreaterThan(3)
    expect(seen).toEqual([...seen].sort((x, y) => x - y))
    // It is listed, titled after its prompt.
    await expect.poll(() => page.locator('#sessions a').allInnerTexts()).toEqual(['hello'])
    expect(page.problems).toEqual([])
  })

  test('Stop interrupts the running task over HTTP', async () => {
    const { url } = await serve()
    const page = await openPage(url)
    await send(page, 'count')
    await page.waitForFunction(() =>
      document.querySelector('#transcript .text')?.textContent?.includes('1, 2, 3'),
    )
    await page.click('#stop')
    await page.waitForSelector('#transcript .notice')
    await idle(page)
    expect(await page.locator('#transcript .notice').innerText()).toBe('⏹ Interrupted')
    expect(await page.locator('#send').isDisabled()).toBe(false)
  })

  test('a prompt sent while the server is down says so and leaves Send usable', async () => {
    const running = await serve()
    const page = await openPage(running.url)
    await page.waitForFunction(() => document.getElementById('model')?.textContent === 'test model')
    await running.close()
    await send(page, 'hello')
    await idle(page)
    expect(await page.locator('#status').innerText()).toMatch(/Could not reach the server/)
    expect(await page.locator('#send').isDisabled()).toBe(false)
    // The prompt is kept, to send again once the server is back.
    expect(await page.inputValue('#input')).toBe('hello')
    expect(page.problems).toEqual([])
  })

  test('a decision sent while the server is down says so and lets the user choose again', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'kode-web-notes-')), 'notes.md')
    const running = await serve({ tools: [saveNoteTool(file)] })
    const page = await openPage(running.url)
    await send(page, 'save a note: buy milk')
    await page.waitForSelector('#transcript .approval button.approve:not([disabled])')
    await idle(page)
    await running.close()
    await page.click('#transcript .approval button.approve')
    await page.waitForSelector('#transcript .approval button.approve:not([disabled])')
    await idle(page)
    expect(await page.locator('#status').innerText()).toMatch(/Could not reach the server/)
    expect(page.problems).toEqual([])
  })

  test('Stop pressed while the server is down says so', async () => {
    const running = await serve({ delayMs: 20 })
    const page = await openPage(running.url)
    await send(page, 'count')
    await page.waitForFunction(() =>
      document.querySelector('#transcript .text')?.textContent?.includes('1, 2'),
    )
    // Gone without a word: the page still shows the task running.
    await running.vanish()
    await page.click('#stop')
    await expect.poll(() => page.locator('#status').innerText()).toMatch(/Could not reach the server/)
    expect(page.problems).toEqual([])
  })

  test('New session pressed while the server is down says so and keeps the session in view', async () => {
    const running = await serve()
    const page = await openPage(running.url)
    await send(page, 'hello')
    await idle(page)
    const title = await page.locator('#title').innerText()
    await running.close()
    await page.click('#new-session')
    await expect.poll(() => page.locator('#status').innerText()).toMatch(/Could not reach the server/)
    expect(await page.locator('#title').innerText()).toBe(title)
    expect(page.problems).toEqual([])
  })

  test('a session list the server is down for says so', async () => {
    const running = await serve()
    // The page's request for the list is held until the server is gone, then sent to it.
    let held: () => void = () => {}
    const asked = new Promise<void>((resolve) => {
      held = resolve
    })
    let release: () => void = () => {}
    const gone = new Promise<void>((resolve) => {
      release = resolve
    })
    const page = await openPage(running.url, (page) =>
      page.route('**/sessions', async (route) => {
        if (route.request().method() !== 'GET') return route.continue()
        held()
        await gone
        await route.continue()
      }),
    )
    await asked
    await running.close()
    release()
    await expect.poll(() => page.locator('#status').innerText()).toMatch(/Could not reach the server/)
    expect(page.problems).toEqual([])
  })

  /**
   * A page reading a task ("count") of a server that then goes without a word (no task_finish):
   * the store, the server's port, the page, and the last event id the page showed.
   */
  async function pageOfVanishedServer() {
    const store = createMemorySessionStore()
    const first = await serve({ store, delayMs: 20 })
    const page = await openPage(first.url)
    await send(page, 'count')
    await page.waitForFunction(() =>
      document.querySelector('#transcript .text')?.textContent?.includes('1, 2'),
    )
    const before = await page.locator('#transcript').getAttribute('data-last-event-id')
    await first.vanish()
    return { store, port: Number(new URL(first.url).port), page, before }
  }

  /** The new server could not place the page's id: it got a reset and the replay, and is idle. */
  async function replayedAfterReconnect(page: Page, before: string | null) {
    await page.waitForFunction(
      (old) => document.querySelector<HTMLElement>('#transcript')?.dataset.lastEventId !== old,
      before,
    )
    expect(await page.locator('#transcript .user').innerText()).toBe('count')
    await idle(page)
  }

  test('a page reading a task when its server dies is idle once a new server answers', async () => {
    const { store, port, page, before } = await pageOfVanishedServer()
    // Another server comes up at its address.
    await serve({ store, port })
    await replayedAfterReconnect(page, before)
    expect(await page.locator('#send').isDisabled()).toBe(false)
    expect(page.problems).toEqual([])
  })

  test('a page whose stream gets an error page while its server restarts says so, and reads again once it is back', async () => {
    // The server goes, and a proxy in front of it answers the page's reconnect with its own error
    // page, as a load balancer does while its backend restarts.
    const { store, port, page, before } = await pageOfVanishedServer()
    let refused = 0
    const proxy = createServer((_req, res) => {
      refused++
      res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>502 Bad Gateway</h1>')
    })
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve))
    // EventSource asks again after the server's retry delay (1 s).
    await expect
      .poll(() => page.locator('#status').innerText(), { timeout: 15_000 })
      .toBe('Lost the connection to the server; trying again…')
    expect(refused).toBeGreaterThan(0)
    proxy.closeAllConnections()
    await new Promise((resolve) => proxy.close(resolve))
    await serve({ store, port })
    await replayedAfterReconnect(page, before)
    expect(await page.locator('#status').innerText()).toBe('')
    expect(page.problems).toEqual([])
  })

  test('a reload mid-stream continues the stream with no gap and no duplicate', async () => {
    // "count" streams "1, 2, 3, " and then holds the response open until interrupted, so the
    // reload happens mid-task whatever the machine's speed.
    const { url } = await serve()
    const page = await openPage(url)
    await send(page, 'count')
    const counted = () => document.querySelector('#transcript .text')?.textContent?.includes('1, 2, 3')
    await page.waitForFunction(counted)
    // A second page that never reloads: what a reader who stayed sees.
    const stayed = await openPage(page.url())
    await stayed.waitForFunction(counted)
    await page.reload()
    await page.waitForFunction(counted)
    expect(await page.locator('#status').getAttribute('data-state')).toBe('running')
    // The stream goes on after the reload: the interrupt and what follows it arrive live.
    await page.click('#stop')
    await Promise.all([idle(page), idle(stayed)])
    await Promise.all([
      page.waitForSelector('#transcript .notice'),
      stayed.waitForSelector('#transcript .notice'),
    ])
    const after = await transcriptText(page)
    expect(after).toBe(await transcriptText(stayed))
    expect(await page.locator('#transcript').getAttribute('data-last-event-id')).toBe(
      await stayed.locator('#transcript').getAttribute('data-last-event-id'),
    )
    expect(after.match(/1, 2, 3/g)).toHaveLength(1)
    expect(await page.locator('#transcript > .user').count()).toBe(1)
    expect(await page.locator('#transcript > .notice').count()).toBe(1)
  })

  test('Approve on a pending tool call, after a reload, continues the task; the decision stays shown', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'kode-web-notes-')), 'notes.md')
    const { url } = await serve({ tools: [saveNoteTool(file)] })
    const page = await openPage(url)
    await send(page, 'save a note: buy milk')
    await page.waitForSelector('#transcript .approval button.approve:not([disabled])')
    await idle(page)
    expect(await page.locator('#transcript .approval').textContent()).toBe(
      '⚠ save_note waits for approval: {"text":"save a note: buy milk"}ApproveDeny',
    )
    // The pending request comes back from the replay, its buttons live.
    await page.reload()
    await page.waitForSelector('#transcript .approval button.approve:not([disabled])')
    await page.click('#transcript .approval button.approve')
    await page.waitForSelector('#transcript .tool[data-status="success"]')
    await page.waitForFunction(() =>
      document.querySelector('#transcript')?.textContent?.includes('The note tool answered'),
    )
    await idle(page)
    expect(await page.locator('#transcript .tool .result').textContent()).toBe(`saved the note to ${file}`)
    expect(await page.locator('#transcript > .notice').innerText()).toBe('✓ approved: save_note')
    expect(readFileSync(file, 'utf8')).toBe('- save a note: buy milk\n')
    for (const button of await page.locator('#transcript .approval button').all())
      expect(await button.isDisabled()).toBe(true)
    // Decided: after another reload the buttons stay disabled.
    await page.reload()
    await page.waitForSelector('#transcript .tool[data-status="success"]')
    expect(await page.locator('#transcript .approval button:not([disabled])').count()).toBe(0)
    expect(page.problems).toEqual([])
  })

  test('a call that waits for approval shows its hidden characters as marked escapes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'kode-web-notes-')), 'notes.md')
    const { url } = await serve({ tools: [saveNoteTool(file)] })
    const page = await openPage(url)
    // A bidi override would show "pay Bob $100" reversed; a zero-width space would show nothing.
    await send(page, 'save a note: pay Bob \u202e001$\u202c today\u200b \\n')
    await page.waitForSelector('#transcript .approval button.approve:not([disabled])')
    await idle(page)
    expect(await page.locator('#transcript .approval').textContent()).toBe(
      '⚠ save_note waits for approval: {"text":"save a note: pay Bob \\u202e001$\\u202c today\\u200b \\\\n"}ApproveDeny',
    )
    // Each shown escape is set apart; the model's own backslashes are not.
    expect(await page.locator('#transcript .approval code .escape').allTextContents()).toEqual([
      '\\u202e',
      '\\u202c',
      '\\u200b',
    ])
    expect(page.problems).toEqual([])
  })

  test('Deny with a reason: the model reads it, the page shows it, and the tool never runs', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'kode-web-notes-')), 'notes.md')
    const { url } = await serve({ tools: [saveNoteTool(file)] })
    const page = await openPage(url)
    await send(page, 'save a note: buy milk')
    await page.waitForSelector('#transcript .approval button.deny:not([disabled])')
    await idle(page)
    // Typed, then Enter in the reason denies, as the keyboard user expects.
    await page.fill('#transcript .approval input.reason', 'not today')
    await page.press('#transcript .approval input.reason', 'Enter')
    await page.waitForSelector('#transcript .tool[data-status="error"]')
    await page.waitForFunction(() =>
      document.querySelector('#transcript')?.textContent?.includes('The note tool answered'),
    )
    await idle(page)
    expect(await page.locator('#transcript .tool .result').textContent()).toBe(
      'denied by the user: not today',
    )
    expect(await page.locator('#transcript > .notice').innerText()).toBe('✗ denied: save_note (not today)')
    expect(await page.locator('#transcript .approval input.reason').isDisabled()).toBe(true)
    expect(existsSync(file)).toBe(false)
    expect(page.problems).toEqual([])
  })

  test("a model's refusal is shown as an error, and the page is idle with the prompt sent", async () => {
    const model = await createSseTestServer()
    model.enqueue({
      status: 400,
      body: JSON.stringify({ error: { message: 'the model does not exist', type: 'invalid_request_error' } }),
    })
    const client = createClient({ api: 'openai-chat', model: 'm', apiKey: 'sk-test', baseUrl: model.url })
    const { url } = await serve({ client })
    const page = await openPage(url)
    await send(page, 'hello')
    await page.waitForSelector('#transcript .task-usage')
    await idle(page)
    const shown = ['hello', '✗ openai-chat responded 400 invalid_request_error: the model does not exist']
    // No usage came back: the task's line says its turns, with nothing dangling after them.
    expect(await page.locator('#transcript > *').allInnerTexts()).toEqual([...shown, 'task: 1 turns'])
    expect(await page.locator('#send').isDisabled()).toBe(false)
    // The same after a reload, from the store.
    await page.reload()
    await page.waitForSelector('#transcript .task-usage')
    expect(await page.locator('#transcript > *').allInnerTexts()).toEqual([...shown, 'task: 1 turns'])
    expect(page.problems).toEqual([])
    await model.close()
  })

  test('an old session opens from the list, replayed from the store, its sub-agent under its call', async () => {
    const store = createMemorySessionStore()
    await writeFixtureSession(store)
    const { url } = await serve({ store })
    const page = await openPage(url)
    await page.click(`#sessions a[data-session-id="${FIXTURE_SESSION}"]`)
    await page.waitForSelector('#transcript h4')
    expect(new URL(page.url()).searchParams.get('session')).toBe(FIXTURE_SESSION)
    expect(await page.locator('#transcript .user').first().innerText()).toBe(
      'Where is the session store defined?',
    )
    expect(
      await page.locator('#transcript .tool[data-tool-call-id="call_explore"] .subagent .text').innerText(),
    ).toBe('SessionStore is in packages/session/src/store/session-store.ts')
    expect(await page.locator('#transcript h4').innerText()).toBe('Found it')
    expect(await page.locator('#transcript a').getAttribute('href')).toBe('https://example.com/docs/sessions')
  })

  test('the sources a response cited are listed under it, each once, only web addresses linked', async () => {
    const store = createMemorySessionStore()
    const id = '5e55a0e0-0000-4000-8000-0000000000c1'
    await store.create({ id, title: 'When was the press built?' })
    const page1 = { url: 'https://example.org/press', title: 'Printing press' }
    await store.append(id, [
      { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'When was the press built?' }] },
      {
        role: 'assistant',
        id: 'a1',
        createdAt: 2,
        parts: [
          { type: 'text', text: 'About 1440.', citations: [{ ...page1, citedText: 'c. 1440' }] },
          {
            type: 'text',
            text: ' In Mainz.',
            citations: [
              { ...page1, citedText: 'Mainz' },
              { url: 'javascript:alert(1)', title: '<b>Click</b>' },
              { title: 'Contract.pdf' },
            ],
          },
        ],
        stopReason: 'stop',
      },
    ])
    const { url } = await serve({ store })
    const page = await openPage(`${url}/?session=${id}`)
    await page.waitForSelector('#transcript .sources li')
    expect(await page.locator('#transcript .sources li').allInnerTexts()).toEqual([
      'Printing press',
      '<b>Click</b>',
      'Contract.pdf',
    ])
    expect(await page.locator('#transcript .sources a').count()).toBe(1)
    const link = page.locator('#transcript .sources a')
    expect(await link.getAttribute('href')).toBe('https://example.org/press')
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer nofollow')
    expect(page.problems).toEqual([])
  })

  test('a call that ran several sub-agents shows each under it, in the order they started', async () => {
    const store = createMemorySessionStore()
    await writeFanOutSession(store)
    const { url } = await serve({ store })
    const page = await openPage(`${url}/?session=${FAN_OUT_SESSION}`)
    await page.waitForSelector('#transcript .tool[data-tool-call-id="call_fan"][data-status="success"]')
    expect(
      await page.locator('#transcript .tool[data-tool-call-id="call_fan"] .subagent .text').allInnerTexts(),
    ).toEqual(['answer 1', 'answer 2'])
    expect(page.problems).toEqual([])
  })

  test("a sub-agent's call with its parent's call id is shown as its own, under the parent's", async () => {
    const store = createMemorySessionStore()
    await writeSharedIdSession(store)
    const { url } = await serve({ store })
    const page = await openPage(`${url}/?session=${SHARED_ID_SESSION}`)
    const parent = '#transcript > .tool[data-tool-call-id="call_0"]'
    await page.waitForSelector(`${parent}[data-status="success"]`)
    expect(await page.locator(`${parent} > .result`).innerText()).toBe('the sub-agent read a')
    expect(await page.locator(`${parent} > summary .name`).innerText()).toBe('explore')
    const child = `${parent} .subagent .tool[data-tool-call-id="call_0"]`
    expect(await page.locator(`${child} .name`).innerText()).toBe('read_file')
    expect(await page.locator(`${child} .result`).textContent()).toBe('contents of a')
    expect(await page.locator(`${parent} .subagent .text`).innerText()).toBe('a holds its contents')
    expect(page.problems).toEqual([])
  })

  test('the rendered transcript matches its screenshot', async () => {
    const store = createMemorySessionStore()
    await writeFixtureSession(store)
    const { url } = await serve({ store })
    const page = await openPage(`${url}/?session=${FIXTURE_SESSION}`)
    await page.waitForSelector('#transcript h4')
    const shot = await page.locator('#transcript').screenshot({ animations: 'disabled' })
    writeFileSync(join(output, 'transcript.png'), shot)
    if (!existsSync(baseline) || process.env.UPDATE_SCREENSHOTS) {
      mkdirSync(join(import.meta.dirname, 'screenshots'), { recursive: true })
      writeFileSync(baseline, shot)
      if (!process.env.UPDATE_SCREENSHOTS)
        throw new Error(`no baseline: wrote ${baseline}; look at it and commit it`)
    }
    expect(await differingPixels(readFileSync(baseline), shot)).toBeLessThan(50)
  })
})

describe("a sub-agent's call waiting for approval", () => {
  const models: WriterModel[] = []
  afterEach(async () => {
    await Promise.all(models.splice(0).map((model) => model.server.close()))
  })
  async function writerModel(options: { clash?: boolean; twice?: boolean } = {}) {
    const notes = join(mkdtempSync(join(tmpdir(), 'kode-web-notes-')), 'notes.md')
    const model = await startWriterModel(notes, options)
    models.push(model)
    return { ...model, notes }
  }
  const subAgentApproval = '#transcript .subagent .approval'
  /** Waits for the main agent's answer and the page to be idle. */
  async function finished(page: Page): Promise<string> {
    await page.waitForSelector('#transcript > .text')
    await idle(page)
    return page.locator('#transcript > .text').innerText()
  }

  test("Approve on it runs the sub-agent's tool, and the task finishes", async () => {
    const { client, tools, notes } = await writerModel()
    const { url } = await serve({ client, tools })
    const page = await openPage(url)
    await send(page, 'save a note through the writer')
    await page.waitForSelector(`${subAgentApproval} button.approve:not([disabled])`)
    await idle(page)
    expect(await page.locator(subAgentApproval).textContent()).toBe(
      '⚠ save_note waits for approval: {"text":"from the writer"}ApproveDeny',
    )
    await page.click(`${subAgentApproval} button.approve`)
    expect(await finished(page)).toBe(`done: done: saved the note to ${notes}`)
    expect(readFileSync(notes, 'utf8')).toBe('- from the writer\n')
    const writerCall = '#transcript > .tool[data-tool-call-id="call_0"]'
    expect(await page.locator(`${writerCall} > .result`).textContent()).toBe(
      `done: saved the note to ${notes}`,
    )
    expect(
      await page.locator(`${writerCall} .subagent .tool[data-status="success"] .result`).textContent(),
    ).toBe(`saved the note to ${notes}`)
    expect(await page.locator(`${writerCall} .subagent .notice`).innerText()).toBe('✓ approved: save_note')
    expect(await page.locator('#transcript .approval button:not([disabled])').count()).toBe(0)
    expect(page.problems).toEqual([])
  })

  test('it is still pending and decidable after the server restarts and the page reloads', async () => {
    const { client, tools, notes } = await writerModel()
    const store = createMemorySessionStore()
    const first = await serve({ client, tools, store })
    const page = await openPage(first.url)
    await send(page, 'save a note through the writer')
    await page.waitForSelector(`${subAgentApproval} button.approve:not([disabled])`)
    await idle(page)
    await first.close()
    await serve({ client, tools, store, port: Number(new URL(first.url).port) })
    await page.reload()
    await page.waitForSelector(`${subAgentApproval} button.deny:not([disabled])`)
    // Replayed, the paused sub-agent is inside the call that runs it, though that call has no
    // result yet (the server says which call it is), and named from its metadata.
    const writerCall = '#transcript > .tool[data-tool-call-id="call_0"]'
    expect(await page.locator('#transcript > .subagent').count()).toBe(0)
    expect(await page.locator(`${writerCall} > .subagent > summary`).innerText()).toBe('⇢ writer')
    expect(await page.locator(`${writerCall} > .subagent .approval`).count()).toBe(1)
    expect(await page.locator(`${writerCall} > .result`).textContent()).toBe('')
    await page.click(`${subAgentApproval} button.deny`)
    expect(await finished(page)).toBe('done: done: denied by the user')
    expect(existsSync(notes)).toBe(false)
    expect(await page.locator(`${writerCall} > .subagent .notice`).innerText()).toBe('✗ denied: save_note')
    // Decided: after another reload no button is live.
    await page.reload()
    await page.waitForSelector('#transcript > .text')
    expect(await page.locator('#transcript .approval button:not([disabled])').count()).toBe(0)
    expect(page.problems).toEqual([])
  })

  test('replayed after a restart, the sub-agent is under the call that runs it, and carries on there', async () => {
    const { client, tools, notes } = await writerModel({ twice: true })
    const store = createMemorySessionStore()
    const first = await serve({ client, tools, store })
    const page = await openPage(first.url)
    await send(page, 'save two notes through the writer')
    await page.waitForSelector(`${subAgentApproval} button.approve:not([disabled])`)
    await idle(page)
    // A new server has no log of the task: the page gets the replay, and which call the paused
    // sub-agent belongs to beside it.
    await first.close()
    await serve({ client, tools, store, port: Number(new URL(first.url).port) })
    await page.reload()
    const writerCall = '#transcript > .tool[data-tool-call-id="call_0"]'
    await page.waitForSelector(`${writerCall} > .subagent .approval button.approve:not([disabled])`)
    await page.click(`${subAgentApproval} button.approve`)
    // The writer asks again, in the same block under its call; the call has no result yet.
    const again = `${writerCall} .subagent .approval[data-tool-call-id="call_1"]`
    await page.waitForSelector(`${again} button.approve:not([disabled])`)
    await idle(page)
    expect(await page.locator('#transcript > .subagent').count()).toBe(0)
    expect(await page.locator(`${writerCall} .subagent > summary`).innerText()).toBe('⇢ writer: save a note')
    await page.click(`${again} button.approve`)
    expect(await finished(page)).toBe(`done: done: saved the note to ${notes} | saved the note to ${notes}`)
    expect(readFileSync(notes, 'utf8')).toBe('- from the writer\n- again\n')
    expect(page.problems).toEqual([])
  })

  test("the main agent's call_0 and the sub-agent's call_0, both pending, are decided each on its own", async () => {
    const { client, tools, notes } = await writerModel({ clash: true })
    const { url } = await serve({ client, tools })
    const page = await openPage(url)
    await send(page, 'save two notes')
    const own = '#transcript > .approval[data-tool-call-id="call_0"]'
    const writers = `${subAgentApproval}[data-tool-call-id="call_0"]`
    await page.waitForSelector(`${own} button.deny:not([disabled])`)
    await page.waitForSelector(`${writers} button.approve:not([disabled])`)
    await idle(page)
    // Deny the main agent's, approve the writer's: each reaches its own call.
    await page.click(`${own} button.deny`)
    expect(await page.locator(`${writers} button.approve`).isDisabled()).toBe(false)
    await page.click(`${writers} button.approve`)
    expect(await finished(page)).toBe(`done: denied by the user | done: saved the note to ${notes}`)
    expect(readFileSync(notes, 'utf8')).toBe('- from the writer\n')
    expect(await page.locator('#transcript > .notice').innerText()).toBe('✗ denied: save_note')
    expect(await page.locator('#transcript .subagent .notice').innerText()).toBe('✓ approved: save_note')
    expect(await page.locator('#transcript .approval button:not([disabled])').count()).toBe(0)
    expect(page.problems).toEqual([])
  })
})

describe('the keyboard', () => {
  test('Enter sends the prompt, Shift+Enter starts a new line', async () => {
    const { url } = await serve()
    const page = await openPage(url)
    await page.focus('#input')
    await page.keyboard.type('line one')
    await page.keyboard.press('Shift+Enter')
    await page.keyboard.type('line two')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#transcript .user')
    await idle(page)
    expect(await page.locator('#transcript .user').textContent()).toBe('line one\nline two')
    expect(await page.inputValue('#input')).toBe('')
  })

  test('Enter that an input method takes to end its composition does not send the prompt', async () => {
    const { url } = await serve()
    const page = await openPage(url)
    await page.focus('#input')
    // Chromium's own input method path: the Enter's keydown comes while composing.
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Input.imeSetComposition', { text: 'にほん', selectionStart: 3, selectionEnd: 3 })
    await page.keyboard.press('Enter')
    await cdp.send('Input.insertText', { text: '日本' })
    // Composed: now Enter sends it.
    await page.keyboard.press('Enter')
    await page.waitForSelector('#transcript .user')
    await idle(page)
    expect(await page.locator('#transcript .user').allTextContents()).toEqual(['日本'])
    expect(page.problems).toEqual([])
  })
})

describe('hostile content', () => {
  test('script tags, javascript: URLs and event handlers in text, thinking, tool output and ids never run', async () => {
    const model = await hostileModel()
    const client = createClient({ api: 'openai-chat', model: 'm', apiKey: 'sk-test', baseUrl: model.url })
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes its text',
      parameters: Type.Object({ text: Type.String() }),
      execute: ({ text }) => text,
    })
    const { url } = await serve({ client, tools: [echo] })
    const page = await openPage(url)
    await send(page, `${HOSTILE} in the prompt`)
    await idle(page)
    await page.waitForSelector('#transcript .task-usage')
    const pwned = await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)
    expect(pwned).toBeUndefined()
    expect(
      await page.evaluate(() => (window as unknown as { __violations?: string[] }).__violations ?? []),
    ).toEqual([])
    expect(
      await page.locator('#transcript script, #transcript img, #transcript iframe, #transcript svg').count(),
    ).toBe(0)
    expect(await page.locator('#sessions script, #sessions img').count()).toBe(0)
    expect(await page.locator('[onerror], [onclick], [onload]').count()).toBe(0)
    // The one safe link is a link; the javascript: one is text.
    const hrefs = await page
      .locator('#transcript a')
      .evaluateAll((links) => links.map((a) => a.getAttribute('href')))
    expect(hrefs).toEqual(['https://example.com/ok'])
    const text = await transcriptText(page)
    expect(text).toContain('<script>window.__pwned = "text"</script>')
    expect(text).toContain('[click me](javascript:window.__pwned="link")')
    expect(await page.locator('#transcript .tool .result').textContent()).toBe(
      `<img src=x onerror="window.__pwned='tool'"><script>window.__pwned='tool'</script>`,
    )
    expect(await page.locator('#sessions a').first().innerText()).toContain('<img src=x')
    // The hostile tool-call id is an attribute value, never markup.
    expect(await page.locator('#transcript .tool').getAttribute('data-tool-call-id')).toBe(HOSTILE_ID)
    // Clicking everything clickable still runs nothing.
    for (const summary of await page.locator('#transcript summary').all()) await summary.click()
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined()
    expect(page.problems).toEqual([])
    await model.close()
  })
})

describe('long lines', () => {
  test('a word longer than the column wraps inside it: the prompt, the answer, a tool call and its result', async () => {
    const word = 'x'.repeat(600)
    const url = `https://example.com/${'a'.repeat(600)}`
    const model = await createSseTestServer({
      handler: (request) =>
        JSON.stringify(request.body).includes('"role":"tool"')
          ? scriptedResponse('openai-chat', { id: 'chatcmpl-long', steps: [{ text: `${word} ${url}` }] })
          : scriptedResponse('openai-chat', {
              id: 'chatcmpl-long',
              steps: [
                { thinking: word },
                { toolCall: { id: 'call_1', name: 'echo', arguments: { text: word } } },
              ],
            }),
    })
    const client = createClient({ api: 'openai-chat', model: 'm', apiKey: 'sk-test', baseUrl: model.url })
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes its text',
      parameters: Type.Object({ text: Type.String() }),
      execute: ({ text }) => text,
    })
    const served = await serve({ client, tools: [echo] })
    const page = await openPage(served.url)
    await send(page, word)
    await idle(page)
    await page.waitForSelector('#transcript .task-usage')
    for (const summary of await page.locator('#transcript summary').all()) await summary.click()
    // Nothing sticks out of the transcript's column, so it never scrolls sideways.
    const overflowing = await page.evaluate(() => {
      const transcript = document.querySelector('#transcript')!
      const right = transcript.getBoundingClientRect().right
      return [...transcript.querySelectorAll('*')]
        .filter((el) => el.getBoundingClientRect().right > right + 0.5 || el.scrollWidth > el.clientWidth + 1)
        .filter((el) => getComputedStyle(el).overflowX === 'visible')
        .map((el) => el.className || el.tagName)
    })
    expect(overflowing).toEqual([])
    expect(await page.evaluate(() => document.querySelector('#transcript')!.scrollWidth)).toBe(
      await page.evaluate(() => document.querySelector('#transcript')!.clientWidth),
    )
    expect(await transcriptText(page)).toContain(word)
    await model.close()
  })
})

describe('another site', () => {
  test('a page on another origin cannot start a task through the browser, by fetch or by form', async () => {
    const { url, store } = await serve({ delayMs: 5 })
    // The other site: any page the user visits, here one on localhost (another origin).
    const site = createServer((_req, res) => res.end('<!doctype html><title>elsewhere</title>'))
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
    const page = await openPage(`http://localhost:${(site.address() as AddressInfo).port}/`)
    const target = `${url}/sessions/0b7c4c3e-3333-4aaa-8bbb-000000000001/messages`
    const formAnswer = page.waitForResponse(
      (r) => r.url() === target && r.request().resourceType() === 'document',
    )
    // What needs no CORS preflight: a no-cors fetch with a text/plain body, and a form post.
    const status = await page.evaluate(async (target) => {
      await fetch(target, { method: 'POST', mode: 'no-cors', body: JSON.stringify({ text: 'count' }) })
      const form = document.body.appendChild(document.createElement('form'))
      form.method = 'POST'
      form.action = target
      form.enctype = 'text/plain'
      const input = form.appendChild(document.createElement('input'))
      input.name = '{"text":"count","x":"'
      input.value = '"}'
      form.submit()
      return 'sent'
    }, target)
    expect(status).toBe('sent')
    expect((await formAnswer).status()).toBe(403)
    expect(await store.list()).toEqual([])
    await new Promise<void>((resolve) => site.close(() => resolve()))
  })
})

const HOSTILE = `<img src=x onerror="window.__pwned='prompt'"><script>window.__pwned='prompt'</script>`
const HOSTILE_ID = `call_"><img src=x onerror="window.__pwned='id'">`

/** A model whose every string is an attack: text, thinking, a tool call's id and arguments. */
async function hostileModel(): Promise<SseTestServer> {
  const args = {
    text: `<img src=x onerror="window.__pwned='tool'"><script>window.__pwned='tool'</script>`,
  }
  const call = scriptedResponse('openai-chat', {
    id: 'chatcmpl-x',
    steps: [
      { thinking: `<script>window.__pwned = "thinking"</script>` },
      { text: '<script>window.__pwned = "text"</script> ' },
      { toolCall: { id: HOSTILE_ID, name: 'echo', arguments: args } },
    ],
  })
  const answer = scriptedResponse('openai-chat', {
    id: 'chatcmpl-x',
    steps: [
      {
        text:
          '[click me](javascript:window.__pwned="link") and [ok](https://example.com/ok) ' +
          '<a href="javascript:window.__pwned=1">raw</a> <iframe src="javascript:1"></iframe> <svg onload="window.__pwned=2">',
      },
    ],
  })
  return createSseTestServer({
    handler: (request) => (JSON.stringify(request.body).includes('"role":"tool"') ? answer : call),
  })
}

/** Counts the pixels that differ noticeably between two PNGs, decoded by the browser itself. */
async function differingPixels(a: Buffer, b: Buffer): Promise<number> {
  // A blank page: the app's CSP rightly refuses the data: URLs this decodes from.
  const page = await browser.newPage()
  return page.evaluate(
    async ([a, b]) => {
      const decode = async (base64: string) => {
        const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${base64}`)).blob())
        const canvas = new OffscreenCanvas(bitmap.width, bitmap.height)
        const context = canvas.getContext('2d')!
        context.drawImage(bitmap, 0, 0)
        return context.getImageData(0, 0, bitmap.width, bitmap.height)
      }
      const [x, y] = await Promise.all([decode(a), decode(b)])
      if (x.width !== y.width || x.height !== y.height) return Number.POSITIVE_INFINITY
      let differing = 0
      for (let i = 0; i < x.data.length; i += 4) {
        const delta = Math.max(
          Math.abs(x.data[i]! - y.data[i]!),
          Math.abs(x.data[i + 1]! - y.data[i + 1]!),
          Math.abs(x.data[i + 2]! - y.data[i + 2]!),
        )
        if (delta > 32) differing++
      }
      return differing
    },
    [a.toString('base64'), b.toString('base64')] as const,
  )
}
