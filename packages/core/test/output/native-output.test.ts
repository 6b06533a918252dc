import type { FramedApi, ScriptedResponse } from '@kode/providers/testing'
import { Type } from '@sinclair/typebox'
import { describe, expect, expectTypeOf, test } from 'vitest'
import { anthropicStream } from '../helpers/anthropic-wire.js'
import { APIS, textReplyFor } from '../helpers/any-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import { expectOrdered } from '../helpers/history-checks.js'
import { summarize, summarizeHistory } from '../helpers/summarize.js'

const Weather = Type.Object(
  { city: Type.String(), celsius: Type.Number() },
  { title: 'Weather', additionalProperties: false },
)
/** The schema as it goes over the wire (TypeBox's symbol keys are not JSON). */
const WIRE_SCHEMA = JSON.parse(JSON.stringify(Weather)) as Record<string, unknown>
const ANSWER = { city: 'Oslo', celsius: 4 }

/** A response whose answer is `value`, the way each api's native structured output returns it. */
export function answerFor(api: FramedApi, id: string, value: unknown): ScriptedResponse {
  if (api === 'anthropic')
    return anthropicStream(id, [{ toolUse: { id: 'toolu_answer', name: 'structured_output', input: value } }])
  return textReplyFor(api, id, JSON.stringify(value))
}

/** What structured output adds to each api's request body. */
const OUTPUT_FIELDS: Record<(typeof APIS)[number]['api'], Record<string, unknown>> = {
  'openai-chat': {
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'Weather', schema: WIRE_SCHEMA, strict: true },
    },
  },
  openrouter: {
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'Weather', schema: WIRE_SCHEMA, strict: true },
    },
  },
  anthropic: {
    tools: [
      {
        name: 'structured_output',
        description:
          'Give your final answer by calling this tool: its input is the answer. Call the other tools you need first; call this one once, alone, when you are done.',
        input_schema: WIRE_SCHEMA,
        cache_control: { type: 'ephemeral' },
      },
    ],
    tool_choice: { type: 'tool', name: 'structured_output' },
  },
  google: { generationConfig: { responseMimeType: 'application/json', responseJsonSchema: WIRE_SCHEMA } },
  'openai-responses': {
    text: { format: { type: 'json_schema', name: 'Weather', schema: WIRE_SCHEMA, strict: true } },
  },
}

describe('structured output on each api', () => {
  const harness = useHarness()

  test.each(APIS)(
    '$api: the request asks with the native setting and the outcome holds the validated value',
    async ({ api, model }) => {
      const h = harness()
      h.server.enqueue(textReplyFor(api, 'r0', 'Oslo, 4 degrees.'))
      h.server.enqueue(answerFor(api, 'r1', ANSWER))
      const client = h.client({ api, model })
      // The same input without output: the body structured output is added to.
      await collect(h.createAgent({ client }).run('Weather in Oslo?'))
      const agent = h.createAgent({ client })
      const run = agent.run('Weather in Oslo?', { output: Weather })
      const { events, outcome } = await collect(run)

      const [plain, structured] = h.server.requests.map((r) => r.body as Record<string, unknown>)
      expect(structured).toEqual({ ...plain, ...OUTPUT_FIELDS[api] })

      expectOrdered(events)
      const text = JSON.stringify(ANSWER)
      expect(summarize(events).filter((line) => !/^(usage|context_usage)/.test(line))).toEqual([
        'task_start',
        'user_message: Weather in Oslo?',
        'turn_start',
        'assistant_text_start',
        ...summarize(events).filter((line) => line.startsWith('text: ')),
        'assistant_text_end',
        `response_complete: ${text}`,
        'turn_end',
        'task_metadata turns=1 subAgents=0',
        `task_finish completed: ${text}`,
      ])
      expect(
        events
          .filter((e) => e.type === 'assistant_text_delta')
          .map((e) => e.content)
          .join(''),
      ).toBe(text)
      // The answer tool never reaches the host as a tool call.
      expect(events.some((e) => e.type === 'tool_call' || e.type === 'tool_call_start')).toBe(false)
      expect(events.at(-1)).toMatchObject({ type: 'task_finish', hasStructuredOutput: true })

      const history = await agent.history()
      expect(summarizeHistory(history)).toEqual([
        'user: Weather in Oslo?',
        `assistant stop: text "${text}"`,
        'task_metadata turns=1 subAgents=0',
      ])
      expect(outcome).toEqual({
        sessionId: agent.sessionId,
        reason: 'completed',
        text,
        output: ANSWER,
        metadata: (history[2] as { metadata: unknown }).metadata,
      })
      expectTypeOf(outcome.output).toEqualTypeOf<{ city: string; celsius: number } | undefined>()
    },
  )

  test.each(APIS)(
    '$api: an answer that does not validate is corrected once, with the native setting on the corrective call too',
    async ({ api, model }) => {
      const h = harness()
      h.server.enqueue(answerFor(api, 'r1', { city: 'Oslo' }))
      h.server.enqueue(answerFor(api, 'r2', ANSWER))
      const agent = h.createAgent({ client: h.client({ api, model }) })
      const { events, outcome } = await collect(agent.run('Weather in Oslo?', { output: Weather }))

      expectOrdered(events)
      expect(summarizeHistory(await agent.history())).toEqual([
        'user: Weather in Oslo?',
        'assistant stop: text "{"city":"Oslo"}"',
        'user: Your final answer does not match the required JSON schema:\n- /celsius: Expected required property\n- /celsius: Expected number\nAnswer again with only a JSON object that is valid against the schema.',
        `assistant stop: text "${JSON.stringify(ANSWER)}"`,
        'task_metadata turns=2 subAgents=0',
      ])
      const [first, second] = h.server.requests.map((r) => r.body as Record<string, unknown>)
      for (const [field, value] of Object.entries(OUTPUT_FIELDS[api])) {
        expect(first![field]).toEqual(value)
        expect(second![field]).toEqual(value)
      }
      // The first answer goes back to the model as its own text, before the correction.
      expect(JSON.stringify(second)).toContain(JSON.stringify(JSON.stringify({ city: 'Oslo' })).slice(1, -1))
      expect(events.at(-1)).toMatchObject({
        type: 'task_finish',
        reason: 'completed',
        hasStructuredOutput: true,
      })
      expect(outcome).toMatchObject({ reason: 'completed', output: ANSWER })
    },
  )
})
