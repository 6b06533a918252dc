// pi-agent-core: an `Agent` over pi-ai's openai-completions api with a model object pointed at
// the local server; `prompt()` runs the loop, a subscriber counts the events.
import { PROMPT, SYSTEM, TOOLS } from '../task.mjs'

/** Prepares the task: resolves to the function that runs it. */
export async function prepare({ origin, record, runTool, keyOf }) {
  const { Agent } = await import('@mariozechner/pi-agent-core')
  const { Type } = await import('@mariozechner/pi-ai')
  // pi-ai imports a provider's module (and its vendor SDK) on that api's first call: load it here
  // so the measurement holds the task only.
  await import('@mariozechner/pi-ai/openai-completions')
  const model = {
    id: 'gpt-4.1',
    name: 'gpt-4.1',
    api: 'openai-completions',
    provider: 'openai',
    baseUrl: `${origin}/v1`,
    reasoning: false,
    input: ['text'],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1_000_000,
    maxTokens: 8_192,
  }
  const tools = TOOLS.map((spec) => {
    const [field] = Object.keys(spec.parameters.properties)
    return {
      name: spec.name,
      label: spec.name,
      description: spec.description,
      parameters: Type.Object({ [field]: Type.String() }),
      execute: async (_id, args) => {
        record(keyOf(args))
        return { content: [{ type: 'text', text: runTool(spec.name, args) }], details: {} }
      },
    }
  })
  return async () => {
    const agent = new Agent({
      initialState: { systemPrompt: SYSTEM, model, tools },
      getApiKey: () => 'bench',
    })
    let events = 0
    agent.subscribe(() => {
      events++
    })
    await agent.prompt(PROMPT)
    const last = agent.state.messages.at(-1)
    if (agent.state.errorMessage) throw new Error(agent.state.errorMessage)
    if (last?.role !== 'assistant') throw new Error(`the task ended on a ${last?.role} message`)
    if (last.stopReason === 'error') throw new Error(last.errorMessage ?? 'error')
    const finalText = last.content
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join('')
    return { finalText, events }
  }
}
