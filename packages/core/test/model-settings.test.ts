import { AgentError, defineSubAgent, reactFormatter } from '@kode/core'
import { describe, expect, test } from 'vitest'
import { APIS, textReplyFor } from './helpers/any-wire.js'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { readFile } from './helpers/tools.js'

/** The fields the agent's settings add to each api's body. */
const AGENT_FIELDS: Record<(typeof APIS)[number]['api'], Record<string, unknown>> = {
  'openai-chat': {
    max_completion_tokens: 1000,
    temperature: 0.5,
    tool_choice: { type: 'function', function: { name: 'read_file' } },
  },
  openrouter: {
    max_tokens: 1000,
    temperature: 0.5,
    tool_choice: { type: 'function', function: { name: 'read_file' } },
  },
  anthropic: { max_tokens: 1000, temperature: 0.5, tool_choice: { type: 'tool', name: 'read_file' } },
  google: {
    toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['read_file'] } },
    generationConfig: { maxOutputTokens: 1000, temperature: 0.5 },
  },
  // gpt-5 refuses any temperature (the catalog's `fixedTemperature`): none is sent.
  'openai-responses': {
    max_output_tokens: 1000,
    tool_choice: { type: 'function', name: 'read_file' },
  },
}

/**
 * The same with a run's settings over them: a larger limit, reasoning, `auto` tool choice and a
 * provider-specific field (the temperature is the agent's; Anthropic drops it while thinking, and
 * gpt-5 always).
 */
const RUN_FIELDS: Record<(typeof APIS)[number]['api'], Record<string, unknown>> = {
  'openai-chat': {
    max_completion_tokens: 8000,
    temperature: 0.5,
    reasoning_effort: 'low',
    tool_choice: 'auto',
    seed: 7,
  },
  openrouter: {
    max_tokens: 8000,
    temperature: 0.5,
    reasoning: { effort: 'low' },
    tool_choice: 'auto',
    seed: 7,
  },
  anthropic: {
    max_tokens: 8000,
    thinking: { type: 'enabled', budget_tokens: 4096 },
    tool_choice: { type: 'auto' },
    seed: 7,
  },
  google: {
    toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
    generationConfig: {
      maxOutputTokens: 8000,
      temperature: 0.5,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 4096 },
    },
    seed: 7,
  },
  'openai-responses': {
    max_output_tokens: 8000,
    reasoning: { effort: 'low', summary: 'auto' },
    tool_choice: 'auto',
    seed: 7,
  },
}

/** `code: message` of the AgentError `make` throws, or `accepted`. */
function refused(make: () => unknown): string {
  try {
    make()
  } catch (error) {
    expect(AgentError.is(error)).toBe(true)
    return `${(error as AgentError).code}: ${(error as Error).message}`
  }
  return 'accepted'
}

describe('model settings', () => {
  const harness = useHarness()

  test.each(APIS)(
    '$api: the agent settings and a run override reach the exact request body',
    async ({ api, model }) => {
      const h = harness()
      for (const id of ['r1', 'r2', 'r3']) h.server.enqueue(textReplyFor(api, id, 'Done.'))
      const client = h.client({ api, model })
      // The same input with no settings: the body the settings are added to.
      await collect(h.createAgent({ client, tools: [readFile] }).run('Hi'))
      const modelSettings = { maxOutputTokens: 1000, temperature: 0.5, toolChoice: { name: 'read_file' } }
      await collect(h.createAgent({ client, tools: [readFile], modelSettings }).run('Hi'))
      const later = h.createAgent({ client, tools: [readFile], modelSettings })
      const { outcome } = await collect(
        later.run('Hi', {
          modelSettings: {
            maxOutputTokens: 8000,
            reasoning: { effort: 'low' },
            toolChoice: 'auto',
            providerOptions: { [api]: { seed: 7 }, 'some-other-api': { ignored: true } },
          },
        }),
      )
      expect(outcome.reason).toBe('completed')
      const [plain, withAgent, withRun] = h.server.requests.map((r) => r.body as Record<string, unknown>)
      expect(withAgent).toEqual({ ...plain, ...AGENT_FIELDS[api] })
      expect(withRun).toEqual({ ...plain, ...RUN_FIELDS[api] })
    },
  )

  test('a budget reaches the apis that size reasoning by tokens', async () => {
    const h = harness()
    h.server.enqueue(textReplyFor('anthropic', 'r1', 'Done.'))
    const agent = h.createAgent({
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
      modelSettings: { maxOutputTokens: 9000, reasoning: { budgetTokens: 2048 } },
    })
    await collect(agent.run('Hi'))
    expect(h.server.requests[0]!.body).toMatchObject({
      max_tokens: 9000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
    })
  })

  test("provider tools follow the agent's tools; a run's entry for an api replaces the agent's", async () => {
    const h = harness()
    const child = defineSubAgent({ name: 'helper', description: 'Helps' })
    h.server.enqueue(textReplyFor('anthropic', 'r1', 'Done.'))
    h.server.enqueue(textReplyFor('anthropic', 'r2', 'Done.'))
    const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }
    const webFetch = { type: 'web_fetch_20250910', name: 'web_fetch' }
    const agent = h.createAgent({
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
      tools: [readFile, child],
      modelSettings: { providerTools: { anthropic: [webSearch], google: [{ codeExecution: {} }] } },
    })
    await collect(agent.run('Hi'))
    await collect(agent.run('Again', { modelSettings: { providerTools: { anthropic: [webFetch] } } }))
    const names = h.server.requests.map((r) =>
      ((r.body as { tools: { name: string; type?: string }[] }).tools ?? []).map((t) => t.type ?? t.name),
    )
    expect(names).toEqual([
      ['read_file', 'helper', 'web_search_20250305'],
      ['read_file', 'helper', 'web_fetch_20250910'],
    ])
    expect((h.server.requests[0]!.body as { tools: unknown[] }).tools[2]).toEqual(webSearch)
  })

  test('sub-agents inherit the settings but the tool choice; their spec overrides', async () => {
    const h = harness()
    const child = defineSubAgent({ name: 'helper', description: 'Helps', tools: [readFile] })
    const tuned = defineSubAgent({
      name: 'tuned',
      description: 'Helps, coldly',
      modelSettings: { temperature: 0 },
    })
    h.server.enqueue(chatStream({ id: 'p1', steps: [call('c1', 'helper', { prompt: 'one' })] }))
    h.server.enqueue(textReply('h1', 'Helped.'))
    h.server.enqueue(chatStream({ id: 'p2', steps: [call('c2', 'tuned', { prompt: 'two' })] }))
    h.server.enqueue(textReply('t1', 'Tuned.'))
    h.server.enqueue(textReply('p3', 'All done.'))
    const agent = h.createAgent({
      tools: [child, tuned],
      modelSettings: { maxOutputTokens: 500, temperature: 0.7, toolChoice: 'required' },
    })
    const { outcome } = await collect(agent.run('Go', { modelSettings: { toolChoice: 'auto' } }))
    expect(outcome.reason).toBe('completed')
    const fields = h.server.requests.map((r) => {
      const { max_completion_tokens, temperature, tool_choice } = r.body as Record<string, unknown>
      return { max_completion_tokens, temperature, tool_choice }
    })
    expect(fields).toEqual([
      { max_completion_tokens: 500, temperature: 0.7, tool_choice: 'auto' },
      { max_completion_tokens: 500, temperature: 0.7, tool_choice: undefined },
      { max_completion_tokens: 500, temperature: 0.7, tool_choice: 'auto' },
      { max_completion_tokens: 500, temperature: 0, tool_choice: undefined },
      { max_completion_tokens: 500, temperature: 0.7, tool_choice: 'auto' },
    ])
  })

  test('unusable settings are refused before anything runs, naming the field', async () => {
    const h = harness()
    expect(refused(() => h.createAgent({ modelSettings: { maxOutputTokens: 0 } }))).toBe(
      'invalid_options: modelSettings.maxOutputTokens must be a positive integer (got 0)',
    )
    expect(refused(() => h.createAgent({ modelSettings: { temperature: -1 } }))).toBe(
      'invalid_options: modelSettings.temperature must be a number of 0 or more (got -1)',
    )
    const agent = h.createAgent()
    expect(refused(() => agent.run('Hi', { modelSettings: { reasoning: { budgetTokens: 1.5 } } }))).toBe(
      'invalid_options: modelSettings.reasoning.budgetTokens must be a positive integer (got 1.5)',
    )
    expect(refused(() => agent.run('Hi', { modelSettings: { toolChoice: 'always' as 'auto' } }))).toBe(
      'invalid_options: modelSettings.toolChoice must be auto, none, required or { name } (got "always")',
    )
    expect(agent.running).toBe(false)
    expect(h.server.requests).toEqual([])
  })

  test('a toolChoice naming a tool the model is not offered is refused before any request', async () => {
    const h = harness()
    const agent = h.createAgent({ tools: [readFile] })
    expect(refused(() => agent.run('Hi', { modelSettings: { toolChoice: { name: 'write_file' } } }))).toBe(
      'invalid_options: modelSettings.toolChoice names write_file, which is not a tool the model is offered (read_file)',
    )
    // The agent's own choice is checked against the tools it has when it runs.
    const forced = h.createAgent({ tools: [readFile], modelSettings: { toolChoice: { name: 'read_file' } } })
    forced.setTools([])
    expect(refused(() => forced.run('Hi'))).toBe(
      'invalid_options: modelSettings.toolChoice names read_file, which is not a tool the model is offered (none)',
    )
    expect(refused(() => forced.continue())).toContain('modelSettings.toolChoice names read_file')
    // A text strategy offers the model no native tools to force.
    const react = h.createAgent({ tools: [readFile], historyFormatter: reactFormatter() })
    expect(
      refused(() => react.run('Hi', { modelSettings: { toolChoice: { name: 'read_file' } } })),
    ).toContain('modelSettings.toolChoice names read_file')
    expect(h.server.requests).toEqual([])
  })

  test('a sub-agent whose toolChoice names none of its tools fails its call, and sends nothing', async () => {
    const h = harness()
    const helper = defineSubAgent({
      name: 'helper',
      description: 'Helps',
      tools: [readFile],
      modelSettings: { toolChoice: { name: 'write_file' } },
    })
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'helper', { prompt: 'Read a' })] }),
      textReply('r2', 'It failed.'),
    )
    const agent = h.createAgent({ tools: [helper] })
    const { outcome } = await collect(agent.run('Go'))
    expect(outcome.reason).toBe('completed')
    expect(h.server.requests).toHaveLength(2)
    const result = (await agent.history()).find((r) => 'role' in r && r.role === 'tool')
    expect(result).toMatchObject({
      status: 'error',
      outputText: expect.stringContaining(
        'toolChoice names write_file, which is not a tool the model is offered (read_file)',
      ),
    })
  })

  test.each([
    ['settings that are not an object', 'fast', 'modelSettings must be an object of settings'],
    ['a null reasoning', { reasoning: null }, 'modelSettings.reasoning needs an effort'],
    ['a reasoning given as text', { reasoning: 'high' }, 'modelSettings.reasoning needs an effort'],
    ['null providerOptions', { providerOptions: null }, 'modelSettings.providerOptions must be an object'],
    [
      'a provider tool list that is an object',
      { providerTools: { google: { codeExecution: {} } } },
      'modelSettings.providerTools.google must list each tool as an object',
    ],
    [
      'a provider tool given as text',
      { providerTools: { google: ['codeExecution'] } },
      'modelSettings.providerTools.google must list each tool as an object',
    ],
    ['a non-numeric token limit', { maxOutputTokens: '100' }, 'modelSettings.maxOutputTokens must be'],
  ])(
    '%s are an invalid_options AgentError, from createAgent, run and a sub-agent alike',
    (_, settings, message) => {
      const h = harness()
      const refused = (make: () => unknown) => {
        try {
          make()
        } catch (error) {
          expect(AgentError.is(error), String(error)).toBe(true)
          expect((error as AgentError).code).toBe('invalid_options')
          return (error as Error).message
        }
        return 'accepted'
      }
      const modelSettings = settings as never
      expect(refused(() => h.createAgent({ modelSettings }))).toContain(message)
      expect(refused(() => h.createAgent().run('Hi', { modelSettings }))).toContain(message)
      expect(
        refused(() => defineSubAgent({ name: 'helper', description: 'Helps', modelSettings })),
      ).toContain(message)
      expect(h.server.requests).toEqual([])
    },
  )
})
