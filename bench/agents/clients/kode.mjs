// Kode: `createAgent` with a memory session store and the openai-chat client, imported by package
// name (the workspace links resolve to the built dist of packages/*: build them first).
import { Unavailable } from '../../providers/clients/unavailable.mjs'
import { PROMPT, SYSTEM, TOOLS } from '../task.mjs'

async function load() {
  try {
    const [core, providers, session] = await Promise.all([
      import('@kode/core'),
      import('@kode/providers'),
      import('@kode/session'),
    ])
    return { core, providers, session }
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error
    throw new Unavailable('the Kode packages are not built (pnpm build)', { cause: error })
  }
}

/** Prepares the task: resolves to the function that runs it. */
export async function prepare({ origin, record, runTool, keyOf, maxTurns }) {
  const { core, providers, session } = await load()
  const { Type } = await import('@sinclair/typebox')
  const tools = TOOLS.map((tool) => {
    const [field] = Object.keys(tool.parameters.properties)
    return core.defineTool({
      name: tool.name,
      description: tool.description,
      parameters: Type.Object({ [field]: Type.String() }, { additionalProperties: false }),
      execute: (args) => {
        record(keyOf(args))
        return runTool(tool.name, args)
      },
    })
  })
  const client = providers.createClient({
    api: 'openai-chat',
    model: 'gpt-4.1',
    apiKey: 'bench',
    baseUrl: `${origin}/v1`,
  })
  return async () => {
    const agent = core.createAgent({
      client,
      store: session.createMemorySessionStore(),
      tools,
      system: SYSTEM,
      maxTurns,
    })
    const run = agent.run(PROMPT)
    let events = 0
    for await (const _ of run) events++
    const outcome = await run.done
    if (outcome.reason !== 'completed') throw new Error(`${outcome.reason}: ${outcome.errorMessage ?? ''}`)
    return { finalText: outcome.text, events }
  }
}
