import { readlink, realpath } from 'node:fs/promises'
import { dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path'

/** Where sessions go when neither `--sessions-dir` nor a config file says, relative to the project. */
export const DEFAULT_SESSIONS_DIR = '.kode/sessions'

/** Where HTML exports go: `exports/` beside the sessions directory. */
export function exportsDirOf(sessionsDir: string): string {
  return join(sessionsDir, '..', 'exports')
}

/**
 * A link in the project that leads where kode would write (sessions or their exports) out of it,
 * or into a loop of links, where nothing can be written and so nothing can be checked.
 */
export type LinkOut =
  | {
      /** The link, as a path in the project. */
      link: string
      /** Where it really leads. */
      target: string
    }
  | { link: string; loop: true }

/** What is wrong with the link, as the notices and errors say it. */
export function describeLinkOut(out: LinkOut): string {
  return 'loop' in out
    ? `${out.link} leads into a loop of symbolic links`
    : `${out.link} is a link to ${out.target}, out of the project`
}

/** A path whose links go round in a loop (the system says `ELOOP` on a write through it). */
export class LinkLoopError extends Error {
  override readonly name = 'LinkLoopError'
  constructor(readonly path: string) {
    super(`too many levels of symbolic links at ${path}`)
  }
}

/**
 * An untrusted project's links lead the sessions directory (`.kode`, or a part of it, is a link
 * out of the project): kode stops before writing anything. Exit status 2, as a config error.
 */
export class SessionsLinkError extends Error {
  override readonly name = 'SessionsLinkError'
}

/** Who chose the sessions directory, and whether the project in `cwd` is trusted. */
export interface SessionsDirChoice {
  /** `--sessions-dir`: the user's own choice, never checked. */
  flag?: string | undefined
  /** The config's `sessionsDir`: the user's, or a project's kept by `trustProjectConfig`. */
  configured?: string | undefined
  trusted: boolean
  /** The user's config file, where `trustedProjects` goes (named in the error). */
  userFile: string
}

/**
 * The sessions directory, resolved against `cwd`. In a project the user has not trusted, a path
 * inside the project (the default `.kode/sessions`, or a relative one from a config file) is
 * written where the project's links lead: when they lead it or its exports out of the project,
 * this throws {@link SessionsLinkError} naming the link. Nothing is created to find out.
 */
export async function chooseSessionsDir(cwd: string, choice: SessionsDirChoice): Promise<string> {
  if (choice.flag !== undefined) return resolve(cwd, choice.flag)
  const dir = resolve(cwd, choice.configured ?? DEFAULT_SESSIONS_DIR)
  // A path whose exports leave the project as written is the user's own (a project's was dropped).
  if (choice.trusted || !inside(cwd, dirname(dir))) return dir
  const out = await linkOutOfProject(cwd, dir)
  if (out === undefined) return dir
  throw new SessionsLinkError(
    `${describeLinkOut(out)}: kode writes no sessions or exports through it ` +
      `until you trust the project. To trust it, pass --trust-project, or add ${JSON.stringify(cwd)} to ` +
      `"trustedProjects" in ${choice.userFile}; or choose where sessions go with --sessions-dir.`,
  )
}

/**
 * The first link that leads `sessionsDir`, or the exports directory beside it, out of the real
 * path of `project` (both as written inside it); undefined when both really are inside.
 */
export async function linkOutOfProject(project: string, sessionsDir: string): Promise<LinkOut | undefined> {
  const real = await realpath(project)
  // Where a path leads; undefined for a loop.
  const leads = (path: string) =>
    whereItLeads(path).catch((error: unknown) => {
      if (error instanceof LinkLoopError) return undefined
      throw error
    })
  for (const path of [sessionsDir, exportsDirOf(sessionsDir)]) {
    const whole = await leads(path)
    if (whole !== undefined && inside(real, whole)) continue
    // Each step down a real directory inside stays inside: the first step that leaves, or that
    // loops, is a link.
    const parts = relative(project, path).split(sep)
    for (let depth = 1; depth <= parts.length; depth++) {
      const link = join(project, ...parts.slice(0, depth))
      const target = await leads(link)
      if (target === undefined) return { link, loop: true }
      if (!inside(real, target)) return { link, target }
    }
  }
  return undefined
}

/** More links than this on one path is a loop (Linux's limit). */
const MAX_LINKS = 40

/**
 * Where `path` (absolute) really is, creating nothing: the real path of its nearest existing
 * ancestor, then the rest as written. A link whose target does not exist yet leads there all the
 * same, as a write through it would. Throws {@link LinkLoopError} for a loop of links.
 */
export async function whereItLeads(path: string): Promise<string> {
  const { root } = parse(path)
  const pending = components(path.slice(root.length))
  let here = root
  let links = 0
  while (pending.length > 0) {
    const part = pending.shift()!
    if (part === '..') {
      here = dirname(here)
      continue
    }
    const next = join(here, part)
    let target: string
    try {
      target = await readlink(next)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      // Not a link: a step down.
      if (code === 'EINVAL') {
        here = next
        continue
      }
      // Nothing there yet, a file in the way or a directory that cannot be read: no link below
      // it can be followed (a write fails there), so the rest is as written.
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return join(next, ...pending)
      throw error
    }
    if (++links > MAX_LINKS) throw new LinkLoopError(next)
    const from = parse(target).root
    if (isAbsolute(target)) here = from
    pending.unshift(...components(target.slice(from.length)))
  }
  return here
}

// The platform's separator only: on POSIX a backslash is part of a name (`x\..` may be a link).
function components(path: string): string[] {
  return path.split(sep).filter((part) => part !== '' && part !== '.')
}

/** Whether `child` is `parent` or below it, as written. */
export function inside(parent: string, child: string): boolean {
  const path = relative(parent, child)
  return path === '' || (!path.startsWith('..') && !isAbsolute(path))
}
