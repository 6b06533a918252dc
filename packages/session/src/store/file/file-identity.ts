import type { BigIntStats } from 'node:fs'
import { lstat } from 'node:fs/promises'

/**
 * A file as the file system knows it, whatever its name: tells a file from another one put in its
 * place (a rename over it, a copy with the same content). As `bigint`s, since inode numbers can
 * exceed what a `number` holds exactly.
 */
export interface FileIdentity {
  dev: bigint
  ino: bigint
}

/** The identity of the file `stats` (from a `bigint` stat) describe. */
export function identityOf(stats: BigIntStats): FileIdentity {
  return { dev: stats.dev, ino: stats.ino }
}

/**
 * Whether `path` itself (a link is not followed) is the file `identity` names. False when nothing
 * is there any more (`ENOENT`, or `ENOTDIR`: a file took a directory's place on the way); other
 * failures to look are thrown.
 */
export async function isSameFile(path: string, identity: FileIdentity): Promise<boolean> {
  try {
    const now = await lstat(path, { bigint: true })
    return now.dev === identity.dev && now.ino === identity.ino
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return false
    throw error
  }
}
