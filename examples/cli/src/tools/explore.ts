import { defineSubAgent, type Tool } from '@kode/core'

/** The `explore` sub-agent's system prompt. */
export const EXPLORE_SYSTEM =
  'You are explore, a read-only research sub-agent. Answer the question you are given about the ' +
  'files of the working directory using search_text, read_file and list_dir. Be brief: report ' +
  'what you found with file paths and line numbers.'

/**
 * `explore`: a sub-agent with the read-only tools. It runs in its own session, linked to the
 * parent's, and its final text is the tool's result.
 */
export function exploreSubAgent(readOnlyTools: readonly Tool[]): Tool {
  return defineSubAgent({
    name: 'explore',
    description:
      'Delegates a research question about the codebase to a read-only sub-agent (it can search, ' +
      'list and read files) and returns its short report. Give it all the context it needs.',
    system: EXPLORE_SYSTEM,
    tools: readOnlyTools,
    maxTurns: 12,
  })
}
