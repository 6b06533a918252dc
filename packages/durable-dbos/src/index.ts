/**
 * @kode/durable-dbos: Kode tasks as DBOS Transact workflows. A task survives the death of the
 * worker running it: another worker carries it on from the session's history, which stays the
 * only checkpoint of what the task did. The host owns DBOS (`DBOS.setConfig`, `DBOS.launch`).
 */
export {
  createDurableAgents,
  type DurableAgents,
  type DurableAgentsOptions,
  type DurableContinueOptions,
  type DurableTaskHandle,
  type DurableTaskStatus,
  type StartOptions,
} from './durable-agents.js'
export { DurableTaskError, type DurableTaskErrorCode } from './errors.js'
export type { StoreRetryOptions } from './store-retry.js'
export type { DurableTask } from './task-plan.js'
export type { AgentContext, AgentFactory } from './task-workflow.js'
