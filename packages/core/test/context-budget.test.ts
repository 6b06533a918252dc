import type { Event } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { call as callStep, chatStream, say } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { summarize } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

const budgets = (events: readonly Event[]) =>
  events.flatMap((e) => (e.type === 'context_usage' && e.estimated ? [e] : []))

// A token counter that counts every text as one token makes the estimates easy to follow: a
// message is 4 (its overhead) + 1 per text, the tool definitions 1.
describe('the context budget before each model call', () => {
  const h = useHarness()

  test('is reported after turn_start: the whole request estimated, then anchored on the last reported usage', async () => {
    const agent = h().createAgent({ tools: [readFile], system: 'S', countTokens: () => 1 })
    h().server.enqueue(
      chatStream({
        id: 'r1',
        steps: [callStep('c1', 'read_file', { path: 'a.txt' })],
        usage: { prompt: 100, completion: 20 },
      }),
      chatStream({ id: 'r2', steps: [say('Done.')], usage: { prompt: 300, completion: 20 } }),
      chatStream({ id: 'r3', steps: [say('Again.')], usage: { prompt: 400, completion: 20 } }),
    )
    const modelSettings = { maxOutputTokens: 1000 }
    const first = await collect(agent.run('Read a.txt', { modelSettings }))
    expect(summarize(first.events, undefined, { withBudget: true })).toEqual([
      'task_start',
      'user_message: Read a.txt',
      'turn_start',
      // Nothing reported yet: the tool definitions (1), the system and the user message (5 each).
      'context_usage estimated 11/127000 of 128000',
      'tool_call_start c1 read_file',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 read_file {"path":"a.txt"}',
      'tool_result c1 success (last): contents of a.txt',
      'turn_end',
      'turn_start',
      // The response's 100 in + 20 out, and the tool result (4 + its name and its text).
      'context_usage estimated 126/127000 of 128000',
      'assistant_text_start',
      'text: Done.',
      'assistant_text_end',
      'response_complete: Done.',
      'usage 300/20',
      'context_usage 320/128000',
      'turn_end',
      'task_metadata turns=2 subAgents=0',
      'task_finish completed: Done.',
    ])
    expect(budgets(first.events)[0]).toMatchObject({
      estimated: true,
      contextTokens: 11,
      contextWindow: 128_000,
      contextPercent: (11 / 128_000) * 100,
      // The request's maxOutputTokens is the reserve.
      outputReserve: 1000,
      inputLimit: 127_000,
    })

    // The next task's first call: the last response's 300 + 20, and the new user message (5). Without
    // maxOutputTokens, the model's own (16,384 for gpt-4o) is the reserve.
    const second = await collect(agent.run('Again'))
    expect(budgets(second.events)).toMatchObject([
      { contextTokens: 325, outputReserve: 16_384, inputLimit: 128_000 - 16_384 },
    ])
    expect(h().server.requests).toHaveLength(3)
  })

  test('a model whose context window is unknown gets no figure, before the call or after it', async () => {
    const agent = h().createAgent({ client: h().client({ model: 'house-model' }) })
    h().server.enqueue(chatStream({ id: 'r1', steps: [say('Hi.')] }))
    const { events, outcome } = await collect(agent.run('Hello'))
    expect(outcome.reason).toBe('completed')
    expect(events.filter((e) => e.type === 'context_usage')).toEqual([])
  })
})

describe("a host's token counter", () => {
  const h = useHarness()

  test('that answers NaN, a negative or no number counts those texts by the estimate: budgets stay numbers', async () => {
    const firstBudget = async (countTokens?: (text: string) => number) => {
      const agent = h().createAgent({ system: 'S', ...(countTokens ? { countTokens } : {}) })
      h().server.enqueue(chatStream({ id: 'r', steps: [say('Hi.')] }))
      const run = await collect(agent.run('Hello there, how are you?'))
      return budgets(run.events)[0]?.contextTokens
    }
    const estimated = await firstBudget()
    expect(estimated).toBeGreaterThan(0)
    for (const odd of [Number.NaN, -1, Number.POSITIVE_INFINITY, undefined, '7']) {
      expect(await firstBudget(() => odd as number)).toBe(estimated)
    }
  })
})
