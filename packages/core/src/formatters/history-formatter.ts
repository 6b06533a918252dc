import type { AssistantMessage, Message, ToolDefinition, ToolResultMessage } from '@kode/protocol'

/** What every request of an agent carries besides the messages, as its formatter sets it up. */
export interface FormatterInstructions {
  /** The tools offered to the model natively, as the provider's tool definitions. None: no tools. */
  tools?: readonly ToolDefinition[]
  /**
   * Sent as the request's `system` text, before the session's system prompt: typically how the
   * model is to state its actions and which tools it has.
   */
  system?: string
}

/** An action a formatter recognised in the text of a response: a tool call the engine will run. */
export interface ParsedAction {
  /** The tool to call. */
  name: string
  /** The arguments as JSON text, as the model wrote them; the tool validates them before it runs. */
  argumentsJson: string
  /** True when the text of the action was cut off (an interrupt, or `length`): it is never run. */
  incomplete?: boolean
}

/**
 * A strategy for how an agent talks to its model (a history formatter). The engine uses
 * it at two seams:
 *
 * - **history → request**: `instructions` says which tools are offered natively and what system
 *   text goes with every request; `isAction`, `formatAction` and `formatResult` present the
 *   history's messages to the provider (given those instructions, so a strategy can send past
 *   actions differently when the requests declare no native tools). The engine formats each
 *   message once and keeps the result, so every member must be a pure function of its arguments
 *   (messages never change, and a session's instructions are fixed).
 * - **response → actions**: `parseActions` finds the actions a finished or interrupted response
 *   states in its text. The engine appends them to the response as `tool_call` parts (ids from
 *   {@link actionCallId}) before persisting it, and runs them like native tool calls.
 *   `needsPendingPlaceholder` decides which actions of an interrupted response are recorded.
 *
 * `nativeFormatter()` is the default; `reactFormatter()` and `codeActFormatter()` are the other
 * built-ins. Start a custom one from `{ ...nativeFormatter(), name: 'mine', ... }`; see
 * docs/history-formatters.md.
 */
export interface HistoryFormatter {
  /** A short name for logs and errors: `native`, `react`, `codeact`, ... */
  readonly name: string
  /**
   * The request's native tools and system text, from the agent's tools. Called once per agent
   * (and per sub-agent task). May throw an `AgentError` (`invalid_options`) for tools it cannot
   * work with; `createAgent` then throws it.
   */
  instructions(tools: readonly ToolDefinition[]): FormatterInstructions
  /**
   * The actions a response states in its text, beyond the `tool_call` parts it already holds, in
   * order. `message.stopReason` tells a finished response from an interrupted (`aborted`) or cut
   * (`length`) one. Native tool calling states none.
   */
  parseActions(message: AssistantMessage): readonly ParsedAction[]
  /**
   * Whether an action of an interrupted response is
   * recorded as a tool call (answered at once by an `aborted` placeholder result, so the history
   * stays valid input) or left as text only.
   */
  needsPendingPlaceholder(action: ParsedAction, message: AssistantMessage): boolean
  /** The answer a response gives the user: `TaskOutcome.text` when it is the task's last. */
  answerText(message: AssistantMessage): string
  /**
   * Whether a history assistant message is an action
   * turn, sent as `formatAction` returns it (otherwise it is sent as it is).
   */
  isAction(message: AssistantMessage): boolean
  /**
   * The messages an action turn is sent as. `instructions` are what
   * this formatter's `instructions` returned for the session's requests.
   */
  formatAction(message: AssistantMessage, instructions: FormatterInstructions): Message | readonly Message[]
  /** The messages a tool result (an observation) is sent as; `instructions` as for `formatAction`. */
  formatResult(result: ToolResultMessage, instructions: FormatterInstructions): Message | readonly Message[]
}

/**
 * The id of the `index`-th tool call of the assistant message `messageId` when the call comes from
 * its text: derived, so the same history always yields the same ids (providers match results to
 * calls by id, turn after turn). Adapters rewrite ids a wire rejects, deterministically.
 */
export function actionCallId(messageId: string, index: number): string {
  return `call_${messageId}_${index}`
}

/**
 * How one history message is sent, by `formatter` for requests carrying `instructions` (the view's
 * per-message format).
 */
export function formatForProvider(
  formatter: HistoryFormatter,
  message: Message,
  instructions: FormatterInstructions,
): Message | readonly Message[] {
  switch (message.role) {
    case 'assistant':
      return formatter.isAction(message) ? formatter.formatAction(message, instructions) : message
    case 'tool':
      return formatter.formatResult(message, instructions)
    case 'system':
    case 'developer':
    case 'user':
      return message
    default: {
      const unknown: never = message
      return unknown
    }
  }
}
