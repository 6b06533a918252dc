import {
  CODE_EXECUTION_TOOL,
  CodeExecutionParameters,
  codeActFormatter,
  defineTool,
  reactFormatter,
} from '@kode/core'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { anthropicStream } from '../helpers/anthropic-wire.js'
import { textReply } from '../helpers/chat-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import { expectOrdered, expectValidHistory } from '../helpers/history-checks.js'
import { readFile } from '../helpers/tools.js'

// A text strategy (ReAct, CodeAct) reads the model's actions from its text. A native response
// format holds every response to the schema (OpenAI, Gemini: JSON only; Anthropic: its answer
// tool forced when no other tool is declared), so the model could never state an action: with
// such a formatter and tools, the schema goes in the request's instructions instead.

const Count = Type.Object({ words: Type.Number() }, { title: 'Count', additionalProperties: false })

describe('structured output with a text strategy', () => {
  const h = useHarness()

  test.each([
    ['openai-chat', 'gpt-4o'],
    ['anthropic', 'claude-sonnet-4-5'],
  ] as const)(
    '%s: no native response format; the schema is in the instructions; actions run',
    async (api, model) => {
      h().server.enqueue(
        api === 'anthropic'
          ? anthropicStream('m1', [
              { text: 'Thought: I read it.\nAction: read_file\nArgs: {"path": "a.txt"}' },
            ])
          : textReply('r1', 'Thought: I read it.\nAction: read_file\nArgs: {"path": "a.txt"}'),
        api === 'anthropic'
          ? anthropicStream('m2', [{ text: 'Thought: done.\nFinal Answer: {"words": 3}' }])
          : textReply('r2', 'Thought: done.\nFinal Answer: {"words": 3}'),
      )
      const agent = h().createAgent({
        client: h().client({ api, model }),
        tools: [readFile],
        historyFormatter: reactFormatter(),
      })
      const { events, outcome } = await collect(agent.run('How many words in a.txt?', { output: Count }))
      expectOrdered(events)
      expect(outcome).toMatchObject({ reason: 'completed', output: { words: 3 } })
      expect(events.filter((e) => e.type === 'tool_call').map((e) => e.toolName)).toEqual(['read_file'])
      expectValidHistory(await agent.history())
      for (const request of h().server.requests) {
        const body = request.body as Record<string, unknown>
        // Nothing that holds the response to the schema, or forces the answer tool.
        expect(body.response_format).toBeUndefined()
        expect(body.tools).toBeUndefined()
        expect(body.tool_choice).toBeUndefined()
        // The schema reaches the model in the system text, beside the ReAct instructions.
        expect(request.rawBody).toContain('read_file')
        expect(request.rawBody).toContain(JSON.stringify(JSON.stringify(Count)).slice(1, -1))
      }
    },
  )

  test('a ReAct agent without tools keeps the native response format: it has no action to state', async () => {
    h().server.enqueue(textReply('r1', '{"words": 3}'))
    const agent = h().createAgent({ historyFormatter: reactFormatter() })
    const { outcome } = await collect(agent.run('How many words in "a b c"?', { output: Count }))
    expect(outcome).toMatchObject({ reason: 'completed', output: { words: 3 } })
    const body = h().server.requests[0]!.body as Record<string, unknown>
    expect(body.response_format).toMatchObject({ type: 'json_schema' })
  })

  test('CodeAct with native tools beside its code tool: those stay native, and no native format is sent', async () => {
    const python = defineTool({
      name: CODE_EXECUTION_TOOL,
      description: 'Runs Python 3.',
      parameters: CodeExecutionParameters,
      execute: ({ code }) => `ran: ${code}`,
    })
    h().server.enqueue(
      textReply('r1', '```python\nprint(len("a b c".split()))\n```'),
      textReply('r2', 'Final Answer: {"words": 3}'),
    )
    const agent = h().createAgent({ tools: [python, readFile], historyFormatter: codeActFormatter() })
    const { outcome } = await collect(agent.run('How many words in "a b c"?', { output: Count }))
    expect(outcome).toMatchObject({ reason: 'completed', output: { words: 3 } })
    for (const request of h().server.requests) {
      const body = request.body as { response_format?: unknown; tools?: { function: { name: string } }[] }
      expect(body.response_format).toBeUndefined()
      expect(body.tools?.map((tool) => tool.function.name)).toEqual(['read_file'])
    }
  })
})
