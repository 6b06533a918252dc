import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Event } from '@kode/protocol'
import { deriveReplayEvents } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { collect, offeredTools, toolResults, useHarness } from './support/harness.js'
import { call, response, say } from './support/model.js'
import { everythingStdio, FILESYSTEM, isAlive } from './support/servers.js'

const harness = useHarness()

/** The everything server and the filesystem server on a fresh directory, both over stdio. */
async function connectBoth() {
  const h = harness()
  const root = realpathSync(h.dir)
  const files = join(root, 'files')
  mkdirSync(files)
  const everything = await h.connect(everythingStdio())
  const fs = await h.connect({ name: 'fs', command: process.execPath, args: [FILESYSTEM, files] })
  return { h, everything, fs, files }
}

describe('an agent driven by a scripted model uses MCP tools', () => {
  test('text, image, structured content, a server error and invalid arguments become tool results', async () => {
    const { h, everything, fs, files } = await connectBoth()
    h.model.enqueue(
      response(
        'r1',
        call('c1', 'everything__echo', { message: 'hello' }),
        call('c2', 'everything__get-tiny-image'),
        call('c3', 'everything__get-structured-content', { location: 'Chicago' }),
        call('c4', 'fs__read_text_file', { path: '/etc/hostname' }),
        call('c5', 'everything__get-sum', { a: 'one', b: 2 }),
        call('c6', 'fs__write_file', { path: join(files, 'note.txt'), content: 'written by the model' }),
      ),
      response('r2', say('Done.')),
    )
    const agent = h.agent({ tools: [...everything.tools, ...fs.tools] })
    const { outcome } = await collect(agent.run('use the tools'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Done.' })

    const offered = offeredTools(h.model, 0)
    expect(offered).toEqual(
      expect.arrayContaining(['everything__echo', 'fs__read_text_file', 'fs__write_file']),
    )
    const results = toolResults(await agent.history())
    expect(results.c1).toMatchObject({ status: 'success', outputText: 'Echo: hello', parts: [] })
    // Text blocks around the image are joined, one per line; the image is a part of its own.
    expect(results.c2).toMatchObject({
      status: 'success',
      outputText: "Here's the image you requested:\nThe image above is the MCP logo.",
    })
    expect(results.c2?.parts).toEqual([
      { type: 'image_url', url: expect.stringMatching(/^data:image\/png;base64,iVBOR/) },
    ])
    expect(results.c3).toMatchObject({
      status: 'success',
      uiExtra: { type: 'json', value: { temperature: expect.any(Number), conditions: expect.any(String) } },
    })
    expect(JSON.parse(results.c3!.outputText)).toEqual((results.c3!.uiExtra as { value: unknown }).value)
    expect(results.c4).toMatchObject({
      status: 'error',
      outputText: expect.stringContaining('Access denied'),
    })
    expect(results.c5).toMatchObject({
      status: 'error',
      outputText: expect.stringContaining('must be number'),
    })
    expect(results.c6).toMatchObject({ status: 'success' })
    expect(readFileSync(join(files, 'note.txt'), 'utf8')).toBe('written by the model')

    // The next request carries the results back to the model, the image included.
    const messages = (h.model.requests[1]!.body as { messages: { role: string; content: unknown }[] })
      .messages
    expect(JSON.stringify(messages)).toContain('data:image/png;base64,iVBOR')
    expect(messages.filter((m) => m.role === 'tool')).toHaveLength(6)
  })

  test('an image of a type models refuse (SVG, BMP) is a note, not a part that would fail every later request', async () => {
    const { h, fs, files } = await connectBoth()
    writeFileSync(join(files, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>')
    writeFileSync(join(files, 'pixel.bmp'), Buffer.from('424d1e000000', 'hex'))
    // A 1x1 PNG: a type every provider takes, still passed on.
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
    writeFileSync(join(files, 'pixel.png'), Buffer.from(png, 'base64'))
    h.model.enqueue(
      response(
        'r1',
        call('c1', 'fs__read_media_file', { path: join(files, 'logo.svg') }),
        call('c2', 'fs__read_media_file', { path: join(files, 'pixel.bmp') }),
        call('c3', 'fs__read_media_file', { path: join(files, 'pixel.png') }),
      ),
      response('r2', say('Seen.')),
    )
    const agent = h.agent({ tools: fs.tools })
    const { outcome } = await collect(agent.run('look at the pictures'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Seen.' })
    const results = toolResults(await agent.history())
    expect(results.c1).toMatchObject({ status: 'success', parts: [] })
    expect(results.c1?.outputText).toContain('[image (image/svg+xml) omitted')
    expect(results.c2).toMatchObject({ status: 'success', parts: [] })
    expect(results.c2?.outputText).toContain('[image (image/bmp) omitted')
    expect(results.c3?.parts).toEqual([{ type: 'image_url', url: `data:image/png;base64,${png}` }])
    // The model is never sent an image its API refuses (a 400 for this and every later request).
    const request = JSON.stringify(h.model.requests[1]?.body)
    expect(request).not.toContain('data:image/svg+xml')
    expect(request).not.toContain('data:image/bmp')
    expect(request).toContain(`data:image/png;base64,${png}`)
  })

  test('an image over the 5 MB models take is a note; large structured content is not stored again', async () => {
    const { h, fs, files } = await connectBoth()
    // 4 MiB of file: 5.3 MiB as base64, over the limit Anthropic applies to an image's base64 form.
    const big = Buffer.alloc(4 * 1024 * 1024, 7)
    big.write('\x89PNG\r\n\x1a\n', 'latin1')
    writeFileSync(join(files, 'huge.png'), big)
    writeFileSync(join(files, 'long.txt'), 'x'.repeat(400_000))
    h.model.enqueue(
      response(
        'r1',
        call('c1', 'fs__read_media_file', { path: join(files, 'huge.png') }),
        call('c2', 'fs__read_text_file', { path: join(files, 'long.txt') }),
      ),
      response('r2', say('Seen.')),
    )
    const agent = h.agent({ tools: fs.tools })
    const { outcome } = await collect(agent.run('look'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Seen.' })
    const results = toolResults(await agent.history())
    expect(results.c1).toMatchObject({ status: 'success', parts: [] })
    expect(results.c1?.outputText).toBe(
      '[image (image/png, 5.3 MB as base64) omitted: models take images up to 5 MB]',
    )
    // The server sends the image's data again as structured content, and the file's text: kept
    // whole for UIs, they would be stored uncapped in the history on every call.
    expect(results.c1?.uiExtra).toBeUndefined()
    expect(results.c2?.uiExtra).toBeUndefined()
    expect(results.c2?.outputText.length).toBeLessThan(40_000)
    const history = JSON.stringify(await agent.history())
    expect(history.length).toBeLessThan(200_000)
    expect(JSON.stringify(h.model.requests[1]?.body)).not.toContain('data:image/png')
  })

  test('an embedded resource sent as bytes of text reaches the model as its text', async () => {
    const h = harness()
    const everything = await h.connect(everythingStdio())
    h.model.enqueue(
      response(
        'r1',
        call('c1', 'everything__get-resource-reference', { resourceType: 'Blob', resourceId: 2 }),
      ),
      response('r2', say('Read it.')),
    )
    const agent = h.agent({ tools: everything.tools })
    await collect(agent.run('read the resource'))
    expect(toolResults(await agent.history()).c1?.outputText).toMatch(
      /^\[resource demo:\/\/resource\/dynamic\/blob\/2\]\nResource 2: This is a base64 blob created at /m,
    )
  })

  test('a long-running call reports its progress as tool_progress events', async () => {
    const h = harness()
    const everything = await h.connect(everythingStdio())
    h.model.enqueue(
      response('r1', call('c1', 'everything__trigger-long-running-operation', { duration: 1.5, steps: 3 })),
      response('r2', say('Done.')),
    )
    const agent = h.agent({ tools: everything.tools })
    const { events } = await collect(agent.run('go'))
    const progress = events.filter((e) => e.type === 'tool_progress')
    // Every step, the last one too, which the server writes right before its result.
    const reported = progress.map((e) => e.type === 'tool_progress' && [e.toolCallId, e.message])
    expect(reported).toEqual([
      ['c1', '1/3'],
      ['c1', '2/3'],
      ['c1', '3/3'],
    ])
    expect(toolResults(await agent.history()).c1).toMatchObject({
      status: 'success',
      outputText: 'Long running operation completed. Duration: 1.5 seconds, Steps: 3.',
    })
  })

  test('an interrupt mid-call cancels the MCP request; the server stays usable and close() reaps it', async () => {
    const h = harness()
    const sent: unknown[] = []
    const everything = await h.connect({
      ...everythingStdio(),
      onMessage: (dir, m) => dir === 'send' && sent.push(m),
    })
    h.model.enqueue(
      response('r1', call('c1', 'everything__trigger-long-running-operation', { duration: 60, steps: 600 })),
      response('r2', call('c2', 'everything__echo', { message: 'still here' })),
      response('r3', say('Done.')),
    )
    const agent = h.agent({ tools: everything.tools })
    const controller = new AbortController()
    agent.events.on('tool_progress', () => controller.abort())
    const first = await collect(agent.run('go', { signal: controller.signal }))
    expect(first.outcome.reason).toBe('aborted')
    expect(toolResults(await agent.history()).c1).toMatchObject({ status: 'aborted' })
    const callRequest = sent.find((m) => (m as { method?: string }).method === 'tools/call') as { id: number }
    expect(sent).toContainEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: callRequest.id, reason: expect.anything() },
    })

    const second = await collect(agent.run('again'))
    expect(second.outcome.reason).toBe('completed')
    expect(toolResults(await agent.history()).c2).toMatchObject({
      status: 'success',
      outputText: 'Echo: still here',
    })

    const pid = everything.pid!
    await everything.close()
    expect(isAlive(pid)).toBe(false)
  })

  test('a session with MCP results resumes in a new process and replays into the same events', async () => {
    const { h, everything } = await connectBoth()
    h.model.enqueue(
      response(
        'r1',
        call('c1', 'everything__get-tiny-image'),
        call('c2', 'everything__get-structured-content', { location: 'New York' }),
      ),
      response('r2', say('Seen.')),
    )
    const agent = h.agent({ tools: everything.tools })
    const live = await collect(agent.run('look'))
    const pid = everything.pid!
    await everything.close()
    expect(isAlive(pid)).toBe(false)

    // A new process: a store reopened over the same files, a fresh connection to the server.
    await h.store.close()
    h.store = h.reopenStore()
    const again = await h.connect(everythingStdio())
    h.model.enqueue(
      response('r3', call('c3', 'everything__echo', { message: 'back' })),
      response('r4', say('Resumed.')),
    )
    const resumed = h.agent({ tools: again.tools, sessionId: agent.sessionId })
    const { outcome } = await collect(resumed.run('continue'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Resumed.' })
    const request = JSON.stringify(h.model.requests[2]?.body)
    expect(request).toContain('data:image/png;base64,iVBOR')
    expect(request).toContain('"look"')

    const history = await resumed.history()
    expect(Object.keys(toolResults(history))).toEqual(['c1', 'c2', 'c3'])
    const replayed = deriveReplayEvents(history).filter((e) => e.type === 'tool_result')
    const liveResults = live.events.filter(
      (e): e is Extract<Event, { type: 'tool_result' }> => e.type === 'tool_result',
    )
    expect(replayed.slice(0, 2).map(resultShape)).toEqual(liveResults.map(resultShape))
    expect(replayed[1]).toMatchObject({
      uiExtra: { type: 'json', value: { temperature: expect.any(Number) } },
    })
  })
})

function resultShape(event: Event) {
  if (event.type !== 'tool_result') return undefined
  const { toolCallId, toolName, result, uiExtra, status } = event
  return { toolCallId, toolName, result, uiExtra, status }
}

describe('approval', () => {
  test('a tool named in needsApproval waits for the user; approved it runs once, denied the model reads why', async () => {
    const h = harness()
    const everything = await h.connect({ ...everythingStdio(), needsApproval: ['echo'] })
    h.model.enqueue(
      response(
        'r1',
        call('c1', 'everything__echo', { message: 'hi' }),
        call('c2', 'everything__get-sum', { a: 1, b: 2 }),
      ),
      response('r2', call('c3', 'everything__echo', { message: 'again' })),
      response('r3', say('Done.')),
    )
    const agent = h.agent({ tools: everything.tools })
    const first = await collect(agent.run('echo and add'))
    // The call that needs no approval ran; the echo waits.
    expect(first.outcome).toMatchObject({
      reason: 'awaiting_approval',
      pendingApprovals: [{ toolCallId: 'c1', toolName: 'everything__echo' }],
    })
    expect(first.events.filter((e) => e.type === 'tool_approval_request')).toHaveLength(1)
    expect(toolResults(await agent.history()).c2).toMatchObject({
      status: 'success',
      outputText: expect.stringContaining('3'),
    })
    expect(toolResults(await agent.history()).c1).toBeUndefined()

    const second = await collect(agent.continue({ approvals: [{ toolCallId: 'c1', approved: true }] }))
    expect(second.outcome).toMatchObject({
      reason: 'awaiting_approval',
      pendingApprovals: [{ toolCallId: 'c3' }],
    })
    expect(toolResults(await agent.history()).c1).toMatchObject({ status: 'success', outputText: 'Echo: hi' })

    const third = await collect(
      agent.continue({ approvals: [{ toolCallId: 'c3', approved: false, reason: 'not now' }] }),
    )
    expect(third.outcome).toMatchObject({ reason: 'completed', text: 'Done.' })
    expect(toolResults(await agent.history()).c3).toMatchObject({
      status: 'error',
      outputText: expect.stringContaining('denied by the user: not now'),
    })
  })
})
