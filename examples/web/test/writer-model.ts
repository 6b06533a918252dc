import { defineSubAgent, type Tool } from '@kode/core'
import { createClient, type LLMClient } from '@kode/providers'
import { createSseTestServer, type SseTestServer, scriptedResponse } from '@kode/providers/testing'
import { saveNoteTool } from '../src/note-tool.js'

// A scripted model for a sub-agent whose tool waits for approval: the main agent delegates to
// `writer`, a sub-agent with `save_note`, and the writer calls it. Each reply is chosen from the
// request alone (who asks, and how many tool results it holds), as the CLI's scripted model does.

const WRITER_SYSTEM = 'You are writer, a sub-agent that saves notes.'

/** The model, the client to it, and the tools: `writer` (a sub-agent with `save_note`) and `save_note`. */
export interface WriterModel {
  server: SseTestServer
  client: LLMClient
  tools: Tool[]
}

/**
 * Starts the model. The main agent's first reply calls `writer` as `call_0`; with `clash`, it calls
 * `save_note` as `call_0` and `writer` as `call_1`, so the main agent and the writer (whose own
 * first call is `call_0` too) both wait on a `call_0`. With `twice`, the writer saves a second note
 * (`call_1`) once its first call has a result. Once its calls have results, each agent answers with
 * them: `done: <results>`.
 */
export async function startWriterModel(
  notes: string,
  options: { clash?: boolean; twice?: boolean } = {},
): Promise<WriterModel> {
  const server = await createSseTestServer({
    handler: (request) => {
      const messages = (request.body as { messages: { role: string; content?: unknown }[] }).messages
      const writer = messages.some(
        (m) => m.role === 'system' && JSON.stringify(m.content).includes(WRITER_SYSTEM),
      )
      const results = messages.filter((m) => m.role === 'tool').map((m) => String(m.content))
      const answer = (id: string) =>
        scriptedResponse('openai-chat', { id, steps: [{ text: `done: ${results.join(' | ')}` }] })
      if (writer) {
        if (options.twice && results.length === 1) {
          return scriptedResponse('openai-chat', {
            id: 'writer-2',
            steps: [{ toolCall: { id: 'call_1', name: 'save_note', arguments: { text: 'again' } } }],
          })
        }
        if (results.length > 0) return answer('writer-3')
        const note = { text: 'from the writer' }
        return scriptedResponse('openai-chat', {
          id: 'writer-1',
          steps: [{ toolCall: { id: 'call_0', name: 'save_note', arguments: note } }],
        })
      }
      if (results.length > 0) return answer('main-2')
      const delegate = { prompt: 'Save a note', description: 'save a note' }
      return scriptedResponse('openai-chat', {
        id: 'main-1',
        steps: options.clash
          ? [
              { toolCall: { id: 'call_0', name: 'save_note', arguments: { text: 'from the main agent' } } },
              { toolCall: { id: 'call_1', name: 'writer', arguments: delegate } },
            ]
          : [{ toolCall: { id: 'call_0', name: 'writer', arguments: delegate } }],
      })
    },
  })
  const client = createClient({ api: 'openai-chat', model: 'm', apiKey: 'sk-test', baseUrl: server.url })
  const writer = defineSubAgent({
    name: 'writer',
    description: 'Saves notes',
    system: WRITER_SYSTEM,
    tools: [saveNoteTool(notes)],
  })
  return { server, client, tools: [writer, saveNoteTool(notes)] }
}
