import { AgentError, defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectValidHistory } from './helpers/history-checks.js'

const harness = useHarness()

const named = (name: string, execute: () => string = () => `${name} ran`): Tool =>
  defineTool({ name, description: `The ${name} tool`, parameters: Type.Object({}), execute })

/** The tool names the model was offered in request `index`. */
function offered(requests: readonly { body: unknown }[], index: number): string[] {
  const body = requests[index]?.body as { tools?: { function: { name: string } }[] }
  return (body.tools ?? []).map((tool) => tool.function.name)
}

describe('setTools', () => {
  test('tools set while a task runs are offered from the next turn on', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'first', {})] }),
      chatStream({ id: 'r2', steps: [call('c2', 'second', {})] }),
      textReply('r3', 'Done.'),
    )
    let agent: ReturnType<typeof h.createAgent> | undefined
    const second = named('second')
    const first = named('first', () => {
      agent?.setTools([second])
      return 'first ran'
    })
    agent = h.createAgent({ tools: [first] })
    const { outcome } = await collect(agent.run('go'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Done.' })
    expect([0, 1, 2].map((i) => offered(h.server.requests, i))).toEqual([['first'], ['second'], ['second']])
    const history = await agent.history()
    expectValidHistory(history)
    const results = history.flatMap((r) => ('role' in r && r.role === 'tool' ? [r.outputText] : []))
    expect(results).toEqual(['first ran', 'second ran'])
  })

  test("a response's calls run with the tools it was offered, though setTools changes them while they run", async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'first', {}), call('c2', 'second', {})] }),
      textReply('r2', 'Done.'),
    )
    let agent: ReturnType<typeof h.createAgent> | undefined
    const replacement = named('second', () => 'the replacement ran')
    // Runs alone, so the second call starts only after it returned.
    const first = defineTool({
      name: 'first',
      description: 'Changes the tools',
      parameters: Type.Object({}),
      concurrent: false,
      execute: () => {
        agent?.setTools([replacement])
        return 'first ran'
      },
    })
    agent = h.createAgent({ tools: [first, named('second')] })
    const { outcome } = await collect(agent.run('go'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Done.' })
    expect([0, 1].map((i) => offered(h.server.requests, i))).toEqual([['first', 'second'], ['second']])
    const history = await agent.history()
    expectValidHistory(history)
    const results = history.flatMap((r) => ('role' in r && r.role === 'tool' ? [r.outputText] : []))
    expect(results).toEqual(['first ran', 'second ran'])
  })

  test("a call's approval is checked against the tool it then runs with, though setTools swaps it during the check", async () => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'deploy', {})] }), textReply('r2', 'Done.'))
    let agent: ReturnType<typeof h.createAgent> | undefined
    const ran: string[] = []
    const guarded = defineTool({
      name: 'deploy',
      description: 'Deploys, once the user approved',
      parameters: Type.Object({}),
      needsApproval: true,
      execute: () => {
        ran.push('guarded')
        return 'guarded deploy'
      },
    })
    const offeredDeploy = defineTool({
      name: 'deploy',
      description: 'Deploys to staging',
      parameters: Type.Object({}),
      needsApproval: async () => {
        agent?.setTools([guarded])
        return false
      },
      execute: () => {
        ran.push('offered')
        return 'staging deploy'
      },
    })
    agent = h.createAgent({ tools: [offeredDeploy] })
    const { outcome } = await collect(agent.run('go'))
    // Never the swapped-in tool, which no one was asked about.
    expect(ran).toEqual(['offered'])
    expect(outcome.reason).toBe('completed')
    expectValidHistory(await agent.history())
    expect(offered(h.server.requests, 1)).toEqual(['deploy'])
  })

  test('two tools with one name are refused and the tools in use stay', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hi.'))
    const agent = h.createAgent({ tools: [named('a')] })
    const error = (() => {
      try {
        agent.setTools([named('b'), named('b')])
      } catch (e) {
        return e
      }
    })()
    expect(AgentError.is(error) && error.code).toBe('invalid_options')
    await collect(agent.run('go'))
    expect(offered(h.server.requests, 0)).toEqual(['a'])
  })
})
