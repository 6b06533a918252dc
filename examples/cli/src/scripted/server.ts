import type { ModelInfo } from '@kode/providers'
import { createSseTestServer, type RecordedRequest, type SseTestServer } from '@kode/providers/testing'
import { anthropicStream } from './anthropic-stream.js'
import { readScriptedRequest } from './request.js'
import { scriptedReply } from './script.js'

/** The model id the scripted server answers as. */
export const SCRIPTED_MODEL = 'kode-scripted'

/**
 * Catalog entry of the scripted model: a context window so the display can show context usage,
 * and zero prices, since it costs nothing, so the usage lines show an honest `$0.0000` where a
 * real model shows its cost.
 */
export const SCRIPTED_MODEL_INFO: ModelInfo = {
  contextWindow: 200_000,
  maxOutputTokens: 8192,
  prices: { input: 0, output: 0 },
}

/** A running scripted model: point an `anthropic` client at `url`. */
export interface ScriptedModel {
  readonly url: string
  readonly api: 'anthropic'
  readonly model: string
  /** Every request received, in order (headers, parsed body). */
  readonly requests: readonly RecordedRequest[]
  close(): Promise<void>
}

/** Options of {@link startScriptedModel}. */
export interface ScriptedModelOptions {
  /** Pause between two writes of a response, so streaming is visible. Default 0. */
  chunkDelayMs?: number
}

/**
 * Starts the scripted model: the providers' SSE test server on 127.0.0.1, speaking the Anthropic
 * Messages wire over real HTTP, each reply chosen from its request (see `scriptedReply`).
 */
export async function startScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  let responses = 0
  const server: SseTestServer = await createSseTestServer({
    handler: (request) => {
      const read = readScriptedRequest(request.body, request.rawBody)
      const reply = scriptedReply(read)
      const stream = anthropicStream(reply.blocks, {
        id: `msg_scripted_${++responses}`,
        model: SCRIPTED_MODEL,
        inputTokens: Math.ceil(read.size / 4),
        stallAfter: reply.stallAfter,
      })
      return {
        body: stream.frames,
        chunkDelayMs: options.chunkDelayMs ?? 0,
        ...(stream.stallAfterBytes !== undefined ? { stallAfterBytes: stream.stallAfterBytes } : {}),
      }
    },
  })
  return {
    url: server.url,
    api: 'anthropic',
    model: SCRIPTED_MODEL,
    requests: server.requests,
    close: () => server.close(),
  }
}
