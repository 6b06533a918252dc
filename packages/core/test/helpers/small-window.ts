import { COMPACTION_PROMPT, defineTool } from '@kode/core'
import type { CompactionRecord, HistoryEvent } from '@kode/protocol'
import type { ModelInfo } from '@kode/providers'
import type { RecordedRequest, ResponseHandler, ScriptedResponse } from '@kode/providers/testing'
import { Type } from '@sinclair/typebox'
import { call, chatStream, say } from './chat-wire.js'
import { NOW } from './harness.js'

/** A catalog entry for a model whose window is a few thousand tokens, so compaction happens early. */
export const TINY: Record<string, ModelInfo> = { tiny: { contextWindow: 4_000, maxOutputTokens: 500 } }

/** The most input tokens a request to `tiny` may take: its window minus its output reserve. */
export const TINY_INPUT_LIMIT = 3_500

/** What the test server counts as a request's tokens: one per 4 bytes of its body. */
export const bodyTokens = (request: RecordedRequest): number => Math.ceil(request.rawBody.length / 4)

/** Whether a Chat Completions request is the engine's summary request. */
export function isSummaryRequest(request: RecordedRequest): boolean {
  return request.rawBody.includes(JSON.stringify(COMPACTION_PROMPT).slice(1, 60))
}

/** The chat `messages` of a request body. */
export function chatMessages(
  request: RecordedRequest,
): { role: string; content?: unknown; tool_calls?: { id: string }[]; tool_call_id?: string }[] {
  return (request.body as { messages: never[] }).messages
}

/** A tool whose output fills the context: about 100 tokens a call. */
export const readChunk = defineTool({
  name: 'read_chunk',
  description: 'Reads one chunk of the log',
  parameters: Type.Object({ n: Type.Integer() }),
  execute: ({ n }) => `chunk ${n}: ${'log line with some words in it; '.repeat(12)}`,
})

/**
 * A scripted model: summary requests get a short summary, the others call `read_chunk` until
 * `turns` calls were made, then answer `done`. Every response reports the request's tokens as the
 * server counts them ({@link bodyTokens}).
 */
export function toolLoopModel(turns: number): ResponseHandler & { mainCalls(): number } {
  let main = 0
  let summaries = 0
  const handler = (request: RecordedRequest): ScriptedResponse => {
    const usage = { prompt: bodyTokens(request), completion: 20 }
    if (isSummaryRequest(request)) {
      summaries++
      return chatStream({
        id: `sum-${summaries}`,
        steps: [say(`Summary ${summaries}: read chunks so far; keep going.`)],
        usage,
      })
    }
    main++
    if (main <= turns)
      return chatStream({ id: `r-${main}`, steps: [call(`c${main}`, 'read_chunk', { n: main })], usage })
    return chatStream({ id: `r-${main}`, steps: [say('done')], usage })
  }
  return Object.assign(handler, { mainCalls: () => main })
}

/** The compaction records of a history. */
export function compactionsOf(history: readonly HistoryEvent[]): CompactionRecord[] {
  return history.filter(
    (record): record is CompactionRecord => !('role' in record) && record.type === 'compaction',
  )
}

/**
 * A finished session of `read_chunk` tool turns: the user's "Read the log", one call per chunk
 * with `output(n)` as its result, then `answer` as the assistant's closing text and the task's
 * `task_metadata`.
 */
export function readChunkSession(
  turns: number,
  output: (n: number) => string,
  answer: { id: string; text: string },
): HistoryEvent[] {
  const at = { createdAt: NOW }
  const records: HistoryEvent[] = [
    { role: 'user', id: 'u1', ...at, parts: [{ type: 'text', text: 'Read the log' }] },
  ]
  for (let n = 1; n <= turns; n++) {
    records.push(
      {
        role: 'assistant',
        id: `a${n}`,
        ...at,
        parts: [{ type: 'tool_call', id: `c${n}`, name: 'read_chunk', argumentsJson: `{"n":${n}}` }],
        stopReason: 'tool_use',
      },
      {
        role: 'tool',
        id: `t${n}`,
        ...at,
        toolCallId: `c${n}`,
        toolName: 'read_chunk',
        status: 'success',
        outputText: output(n),
        parts: [],
      },
    )
  }
  records.push(
    {
      role: 'assistant',
      id: answer.id,
      ...at,
      parts: [{ type: 'text', text: answer.text }],
      stopReason: 'stop',
    },
    // The task's end: without it the session would read as one whose process died mid-task.
    {
      type: 'task_metadata',
      id: `${answer.id}-end`,
      ...at,
      metadata: {
        main: { sessionId: '', usage: {}, costUsd: 0, durationMs: 0, turnCount: turns + 1 },
        subAgents: [],
      },
    },
  )
  return records
}
