/**
 * @kode/core: the task/turn engine. An agent runs tasks (one user input, a loop of turns of one
 * model response and its tool calls), executes tools and sub-agents, persists the session as it
 * goes and emits typed protocol events through an async iterable and an emitter.
 */
export type { AgentRun } from './agent/agent-run.js'
export {
  type Agent,
  type AgentEventMap,
  type CompactOptions,
  type ContinueOptions,
  createAgent,
  type OutputOf,
  type RunInputOptions,
  type RunOptions,
} from './agent/create-agent.js'
export { AGENT_DEFAULTS, type AgentOptions } from './agent/options.js'
export type { CompactionResult } from './compaction/compact.js'
export { type CompactedHistory, compactedHistory, SUMMARY_PREFIX } from './compaction/compacted-history.js'
export { estimateTokens, IMAGE_TOKENS, type TokenCounter } from './compaction/estimate.js'
export {
  COMPACTION_DEFAULTS,
  type CompactionOptions,
  type SummarizeInput,
  type Summarizer,
} from './compaction/options.js'
export { COMPACTION_PROMPT, IMAGE_NOTE } from './compaction/summary-request.js'
export { createEndEvent } from './end-event.js'
export { AgentError, type AgentErrorCode } from './errors.js'
export {
  CODE_EXECUTION_TOOL,
  type CodeActContext,
  type CodeActFormatterOptions,
  CodeExecutionParameters,
  codeActFormatter,
  codeActInstructions,
} from './formatters/codeact.js'
export {
  actionCallId,
  type FormatterInstructions,
  type HistoryFormatter,
  type ParsedAction,
} from './formatters/history-formatter.js'
export { nativeFormatter } from './formatters/native.js'
export {
  createProviderView,
  type ProviderMessageFormat,
  ProviderView,
  type ProviderViewOptions,
} from './formatters/provider-view.js'
export { type ReActFormatterOptions, reactFormatter, reactInstructions } from './formatters/react.js'
export type { ActionHistory } from './formatters/text-actions.js'
export type { AgentHooks, HookContext, ToolCallDecision } from './hooks/hooks.js'
export type { PendingApproval, TaskOutcome } from './outcome.js'
export { readStructuredOutput } from './output/read-output.js'
export type { ModelSettings } from './settings/model-settings.js'
export {
  type DefaultSubAgentParameters,
  defineSubAgent,
  type SubAgentDefinition,
} from './sub-agents/define-sub-agent.js'
export { type ApprovalDecision, pendingApprovals } from './task/approval.js'
export type { UserInput, UserMode } from './task/user-input.js'
export type { ParsedArguments } from './tools/arguments.js'
export {
  type ApprovalContext,
  defineTool,
  type NeedsApproval,
  type OnResume,
  type Tool,
  type ToolContext,
  type ToolOutput,
  type ToolReturn,
  type ToolSpec,
} from './tools/define-tool.js'
export { capOutput } from './tools/output-limit.js'
export type { SubAgentOutcome, SubAgentSpec } from './tools/sub-agent-spec.js'
export {
  INTERRUPTED_FINISHED_TEXT,
  INTERRUPTED_PENDING_TEXT,
  INTERRUPTED_RUNNING_TEXT,
} from './tools/tool-outcome.js'
