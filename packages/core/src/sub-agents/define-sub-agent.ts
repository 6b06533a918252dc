import type { UserContentPart } from '@kode/protocol'
import {
  type Static,
  type TObject,
  type TOptional,
  type TSchema,
  type TString,
  Type,
} from '@sinclair/typebox'
import type { TaskOutcome } from '../outcome.js'
import { defineTool, type Tool, type ToolOutput } from '../tools/define-tool.js'
import { checkSubAgentSpec, type SubAgentSpec } from '../tools/sub-agent-spec.js'
import { SUB_AGENT_SPEC } from './inherited-formatter.js'

/** The arguments a sub-agent tool takes unless its definition says otherwise. */
export type DefaultSubAgentParameters = TObject<{ prompt: TString; description: TOptional<TString> }>

const DEFAULT_PARAMETERS: DefaultSubAgentParameters = Type.Object({
  prompt: Type.String({ description: 'The task for the sub-agent, with all the context it needs.' }),
  description: Type.Optional(
    Type.String({ description: 'A short label of the task (3-5 words) for the user.' }),
  ),
})

/** What `defineSubAgent` takes. */
export interface SubAgentDefinition<P extends TSchema> extends Omit<SubAgentSpec, 'label'> {
  /** Tells the parent model what the sub-agent is for and when to use it. */
  description: string
  /** The tool's arguments. Default: `{ prompt: string, description?: string }`. */
  parameters?: P | undefined
  /** The child's input built from the arguments. Default: `args.prompt`, else the arguments as JSON. */
  input?: ((args: Static<P>) => string | readonly UserContentPart[]) | undefined
  /** A time limit for the whole sub-agent task. Default: none (the child's own limits apply). */
  timeoutMs?: number | undefined
  /** Whether it may run alongside sibling calls (other sub-agents included). Default `true`. */
  concurrent?: boolean | undefined
}

/**
 * Defines a sub-agent: a tool that runs a child agent in its own session (linked to the parent's)
 * and returns the child's final text (with `output`, its validated answer as JSON) as its result, with `uiExtra` `{ type: 'session', sessionId }`
 * and the child's accounting as `taskMetadata`. Sibling sub-agents run concurrently; their events
 * interleave on the parent's stream, told apart by `sessionId`. Throws `AgentError` for a name
 * providers would reject (`invalid_tool`), a non-positive `maxTurns` or duplicate tool names
 * (`invalid_options`).
 */
export function defineSubAgent<P extends TSchema = DefaultSubAgentParameters>(
  definition: SubAgentDefinition<P>,
): Tool<P> {
  checkSubAgentSpec(definition)
  const parameters = (definition.parameters ?? DEFAULT_PARAMETERS) as P
  const tool = defineTool({
    name: definition.name,
    description: definition.description,
    parameters,
    concurrent: definition.concurrent ?? true,
    timeoutMs: definition.timeoutMs ?? Number.POSITIVE_INFINITY,
    async execute(args, ctx) {
      const spec: SubAgentSpec = {
        name: definition.name,
        system: definition.system,
        tools: definition.tools,
        client: definition.client,
        maxTurns: definition.maxTurns,
        historyFormatter: definition.historyFormatter,
        modelSettings: definition.modelSettings,
        output: definition.output,
      }
      const label = labelOf(args)
      if (label !== undefined) spec.label = label
      const input = definition.input ? definition.input(args) : defaultInput(args)
      return subAgentResult(definition.name, await ctx.runSubAgent(spec, input))
    },
  })
  // What the agent checks before any call: that the child can work with the formatter it gets.
  const child = {
    name: definition.name,
    tools: definition.tools,
    historyFormatter: definition.historyFormatter,
  }
  return Object.freeze(Object.defineProperty({ ...tool }, SUB_AGENT_SPEC, { value: child }))
}

/** The tool result of a sub-agent's outcome. */
function subAgentResult(name: string, outcome: TaskOutcome): ToolOutput {
  const shared = {
    uiExtra: { type: 'session', sessionId: outcome.sessionId } as const,
    taskMetadata: outcome.metadata.main,
  }
  if (outcome.reason === 'completed') {
    // A structured answer goes to the parent's model as the validated value alone.
    const text = outcome.output === undefined ? outcome.text : JSON.stringify(outcome.output)
    return { outputText: text, ...shared }
  }
  const why =
    outcome.reason === 'aborted'
      ? `The sub-agent ${name} was interrupted.`
      : `The sub-agent ${name} stopped early: ${outcome.errorMessage ?? outcome.reason}`
  return { outputText: outcome.text ? `${outcome.text}\n\n${why}` : why, status: 'error', ...shared }
}

function defaultInput(args: unknown): string {
  const prompt = (args as { prompt?: unknown } | null)?.prompt
  return typeof prompt === 'string' ? prompt : JSON.stringify(args)
}

function labelOf(args: unknown): string | undefined {
  const description = (args as { description?: unknown } | null)?.description
  return typeof description === 'string' ? description : undefined
}
