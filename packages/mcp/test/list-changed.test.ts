import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { collect, offeredTools, toolResults, useHarness } from './support/harness.js'
import { call, response, say } from './support/model.js'
import { CHANGING } from './support/servers.js'

const harness = useHarness()
const SCRIPTED = fileURLToPath(new URL('./fixtures/scripted-server.mjs', import.meta.url))

describe('tools/list_changed', () => {
  test('a tool the server adds during a task is offered from the next turn on', async () => {
    const h = harness()
    const dyn = await h.connect({ name: 'dyn', command: process.execPath, args: [CHANGING] })
    expect(dyn.tools.map((t) => t.name)).toEqual(['dyn__add_tool', 'dyn__add_lookalike', 'dyn__hang_lists'])
    h.model.enqueue(
      response('r1', call('c1', 'dyn__add_tool')),
      response('r2', call('c2', 'dyn__added_1')),
      response('r3', say('Done.')),
    )
    const agent = h.agent({ tools: dyn.tools })
    const changes: string[][] = []
    dyn.onToolsChanged((tools) => {
      changes.push(tools.map((t) => t.name))
      agent.setTools(tools)
    })
    const { outcome } = await collect(agent.run('grow'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Done.' })
    expect(changes).toEqual([['dyn__add_tool', 'dyn__add_lookalike', 'dyn__hang_lists', 'dyn__added_1']])
    expect([0, 1].map((i) => offeredTools(h.model, i))).toEqual([
      ['dyn__add_tool', 'dyn__add_lookalike', 'dyn__hang_lists'],
      ['dyn__add_tool', 'dyn__add_lookalike', 'dyn__hang_lists', 'dyn__added_1'],
    ])
    const results = toolResults(await agent.history())
    expect([results.c1?.outputText, results.c2?.outputText]).toEqual(['added added_1', 'added_1 ran'])
  })

  test('refresh() reads the list again; a filter keeps tools out', async () => {
    const h = harness()
    const dyn = await h.connect({
      name: 'dyn',
      command: process.execPath,
      args: [CHANGING],
      toolPrefix: '',
      filter: (tool) => tool.name !== 'added_2',
    })
    const add = dyn.tools[0]!
    const ctx = { signal: new AbortController().signal, progress: () => {} } as never
    await add.execute({}, ctx)
    await add.execute({}, ctx)
    expect((await dyn.refresh()).map((t) => t.name)).toEqual([
      'add_tool',
      'add_lookalike',
      'hang_lists',
      'added_1',
    ])
    expect(dyn.toolInfo.map((t) => t.serverToolName)).toEqual([
      'add_tool',
      'add_lookalike',
      'hang_lists',
      'added_1',
    ])
  })

  test('a read whose tools could not be made (a filter that threw) is made again by the next read', async () => {
    const h = harness()
    let failures = 1
    const dyn = await h.connect({
      name: 'dyn',
      command: process.execPath,
      args: [CHANGING],
      filter: (tool) => {
        if (tool.name === 'added_1' && failures-- > 0) throw new Error('filter failed once')
        return true
      },
    })
    const ctx = { signal: new AbortController().signal, progress: () => {} } as never
    // The call's result waits for the read of the list it changed, whose filter threw.
    await dyn.tools[0]!.execute({}, ctx)
    expect(failures).toBe(0)
    expect(dyn.tools.map((t) => t.name)).not.toContain('dyn__added_1')
    // The same list once more: not taken for one already made.
    expect((await dyn.refresh()).map((t) => t.name)).toContain('dyn__added_1')
  })

  test('a read that finds the same list calls no listener and keeps the tools as they were', async () => {
    const h = harness()
    const dyn = await h.connect({ name: 'dyn', command: process.execPath, args: [CHANGING] })
    const before = dyn.tools
    const changes: number[] = []
    dyn.onToolsChanged((tools) => changes.push(tools.length))
    await expect(dyn.refresh()).resolves.toBe(before)
    expect([dyn.tools, changes]).toEqual([before, []])
    // The control: a read that finds a changed list does call the listener, with a new array.
    await dyn.tools[0]!.execute({}, { signal: new AbortController().signal, progress: () => {} } as never)
    const after = await dyn.refresh()
    expect([after === before, changes]).toEqual([false, [before.length + 1]])
  })

  test('a tool added under a name that reads like another: both get hashed names, and the old name is gone', async () => {
    const h = harness()
    const dyn = await h.connect({ name: 'dyn', command: process.execPath, args: [CHANGING] })
    const ctx = { signal: new AbortController().signal, progress: () => {} } as never
    const lookalike = dyn.tools.find((t) => t.name === 'dyn__add_lookalike')!
    await lookalike.execute({}, ctx)
    const tools = await dyn.refresh()
    const names = tools.map((t) => t.name)
    // `dyn__add_tool` named add_tool before; it now names no tool, so a call the model made to it
    // earlier can only fail as unknown, never run add.tool.
    expect(names).not.toContain('dyn__add_tool')
    const byServerName = new Map(dyn.toolInfo.map((t) => [t.serverToolName, t.name]))
    expect(byServerName.get('add_tool')).toMatch(/^dyn__add_tool_[0-9a-f]{8}$/)
    expect(byServerName.get('add.tool')).toMatch(/^dyn__add_tool_[0-9a-f]{8}$/)
    expect(byServerName.get('add_tool')).not.toBe(byServerName.get('add.tool'))
    const run = async (server: string) => {
      const tool = tools.find((t) => t.name === byServerName.get(server))!
      const out = (await tool.execute({}, ctx)) as { content?: { text?: string }[] } | string
      return JSON.stringify(out)
    }
    expect(await run('add.tool')).toContain('add.tool ran')
    expect(await run('add_tool')).toContain('added added_1')
  })

  test('a server that stops answering tools/list: the call still returns, the old tools stay', async () => {
    const h = harness()
    const dyn = await h.connect({
      name: 'dyn',
      command: process.execPath,
      args: [CHANGING],
      connectTimeoutMs: 5_000,
    })
    h.model.enqueue(response('r1', call('c1', 'dyn__hang_lists')), response('r2', say('Still here.')))
    const agent = h.agent({ tools: dyn.tools })
    dyn.onToolsChanged((tools) => agent.setTools(tools))
    const { outcome } = await collect(agent.run('go'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Still here.' })
    expect(toolResults(await agent.history()).c1).toMatchObject({
      status: 'success',
      outputText: 'lists hang from now on',
    })
    expect(offeredTools(h.model, 1)).toEqual(['dyn__add_tool', 'dyn__add_lookalike', 'dyn__hang_lists'])
    await expect(dyn.refresh()).rejects.toThrow(/timed out/i)
    expect(dyn.tools.map((t) => t.name)).toEqual(['dyn__add_tool', 'dyn__add_lookalike', 'dyn__hang_lists'])
  })

  test('a change announced while the first list is read: the newer list is kept, whatever order the answers come in', async () => {
    const tools = [{ name: 'old', inputSchema: { type: 'object' } }]
    const dyn = await harness().connect({
      name: 'dyn',
      command: process.execPath,
      args: [SCRIPTED, JSON.stringify(tools), '{}', 'reorder'],
    })
    // Once both answers have come (the first is held 300 ms at most), and the re-read it called for.
    await new Promise((resolve) => setTimeout(resolve, 800))
    expect(dyn.tools.map((t) => t.name)).toEqual(['dyn__old', 'dyn__fresh'])
  })
})
