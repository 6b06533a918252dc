import { AgentError } from '../errors.js'

// The host's most common mistakes with an agent, each saying how to do it right: these are
// what a newcomer meets first, and a bare "busy" or "closed" does not say what to write instead.

/** `run`, `continue` or `compact` while a task (or a compaction) runs. */
export function agentBusy(sessionId: string): AgentError {
  return new AgentError(
    'agent_busy',
    `a task is already running in session ${sessionId}: iterate its run to the end or await run.done before starting another, or pass the input to agent.steer to add it to the running task`,
  )
}

/** Any use of an agent after `close()`. */
export function agentClosed(sessionId: string): AgentError {
  return new AgentError(
    'agent_closed',
    `the agent of session ${sessionId} is closed: to continue the session, make a new agent with createAgent({ sessionId })`,
  )
}

/** A second iteration of one run. */
export function alreadyIterated(sessionId: string): AgentError {
  return new AgentError(
    'already_iterated',
    `the run of session ${sessionId} is already being iterated: iterate a run once, and listen on agent.events for a second consumer`,
  )
}
