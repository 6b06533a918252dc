import { realpath } from 'node:fs/promises'
import { dirname, isAbsolute, resolve } from 'node:path'
import type { KodeConfig } from './config.js'
import { describeLinkOut, inside, linkOutOfProject } from './sessions-location.js'

/** Whether the user trusts the project in the working directory. */
export interface ProjectTrust {
  /** `--trust-project` was given. */
  flag: boolean
  /** Directories the user's config file trusts (a directory trusts everything below it). */
  trustedProjects: readonly string[]
}

/**
 * Fields of a project's config that decide where API keys (or other secrets) go: the server a key
 * is sent to, and which environment variable is sent as the key.
 */
const KEY_ROUTING = ['baseUrl', 'apiKeyEnv'] as const

/**
 * Merges a project's config over the user's, as editors treat an untrusted workspace: an untrusted
 * project may pick the api and model (keys then go to that api's own host only) and display
 * settings, but not `baseUrl` or `apiKeyEnv`, nor a `sessionsDir` outside the project, as written
 * or where its links lead (session files hold what the tools read). When it picks another api than the user's, the user's
 * `baseUrl` and `apiKeyEnv` are dropped too, as `/model` does: they belong to the other api's
 * server. Nor may it add `mcpServers` (programs kode would start); a trusted project's servers
 * join the user's. `trustedProjects` is the user's to set, never a project's. Every ignored
 * setting is named in a notice.
 */
export async function trustProjectConfig(
  user: KodeConfig,
  project: KodeConfig,
  where: { cwd: string; file: string; userFile: string; trust: ProjectTrust },
): Promise<{ config: KodeConfig; notices: string[] }> {
  const { trustedProjects: claimed, mcpServers: projectServers, ...settings } = project
  const notices: string[] = []
  if (claimed !== undefined) {
    notices.push(
      `${where.file}: trustedProjects is ignored here; only your own config (${where.userFile}) trusts projects`,
    )
  }
  const { trustedProjects: _userTrust, ...userSettings } = user
  if (await isProjectTrusted(where.cwd, where.trust)) {
    // A trusted project's servers join the user's; one of the same name replaces the user's.
    const mcpServers = projectServers ? { ...user.mcpServers, ...projectServers } : user.mcpServers
    return { config: { ...userSettings, ...settings, ...(mcpServers ? { mcpServers } : {}) }, notices }
  }
  const ignored: string[] = []
  // An MCP server is a program kode starts: an untrusted repository must not run one.
  if (projectServers !== undefined) {
    notices.push(
      `ignoring mcpServers in ${where.file}: a project's config may not start programs until you trust it. ` +
        `To trust it, pass --trust-project, or add ${JSON.stringify(where.cwd)} to "trustedProjects" in ${where.userFile}.`,
    )
  }
  const kept: KodeConfig = { ...settings }
  for (const field of KEY_ROUTING) {
    if (kept[field] !== undefined) {
      ignored.push(field)
      delete kept[field]
    }
  }
  if (kept.sessionsDir !== undefined) {
    const why = await outsideProject(where.cwd, kept.sessionsDir)
    if (why !== undefined) {
      ignored.push(`sessionsDir (${why})`)
      delete kept.sessionsDir
    }
  }
  const base: KodeConfig = { ...userSettings }
  if (kept.api !== undefined && kept.api !== user.api) {
    delete base.baseUrl
    delete base.apiKeyEnv
  }
  if (ignored.length > 0) {
    notices.push(
      `ignoring ${ignored.join(', ')} in ${where.file}: a project's config may not change where API keys go until you trust it. ` +
        `To trust it, pass --trust-project, or add ${JSON.stringify(where.cwd)} to "trustedProjects" in ${where.userFile}.`,
    )
  }
  return { config: { ...base, ...kept }, notices }
}

/** Why a project's `sessionsDir` would put sessions or their exports outside the project, if it would. */
async function outsideProject(cwd: string, sessionsDir: string): Promise<string | undefined> {
  const dir = resolve(cwd, sessionsDir)
  // Exports go to `exports/` beside the sessions directory (see `exportsDirOf`): that must be
  // inside too, so the project itself (`.`) is no place for sessions either.
  if (!inside(cwd, dirname(dir))) return 'outside the project'
  // A link committed in the project can lead a path inside it out: judged where it leads.
  const out = await linkOutOfProject(cwd, dir)
  if (out === undefined) return undefined
  return 'loop' in out ? describeLinkOut(out) : `outside the project: ${out.link} is a link to ${out.target}`
}

/** Whether the user trusts the project in `cwd`: `--trust-project`, or `trustedProjects` lists it. */
export async function isProjectTrusted(cwd: string, trust: ProjectTrust): Promise<boolean> {
  if (trust.flag) return true
  const here = await canonical(cwd)
  for (const entry of trust.trustedProjects) {
    // Only absolute entries: a relative one would mean a different directory wherever kode runs.
    if (isAbsolute(entry) && inside(await canonical(entry), here)) return true
  }
  return false
}

/** Resolves links, so a trusted directory is recognised by any path to it (and only by those). */
async function canonical(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path))
}
