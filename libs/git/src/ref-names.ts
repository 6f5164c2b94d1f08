/**
 * git's `check-ref-format --branch` rules (refs.c `check_refname_component`), without a process: what
 * GitLab's `Gitlab::GitRefValidator.validate` asks git before it creates a branch or a tag. GitLab also
 * refuses names that start with `refs/heads/` or `refs/remotes/` (they would read as full refs).
 * Beyond git's format: a part whose lock file (`<part>.lock`) would exceed a file name's 255 bytes
 * cannot be written as a loose ref, so git's own push refuses it; it is refused here before any write.
 */
/** 255 bytes of a file name, less the `.lock` git writes the ref through. */
const MAX_REF_PART_BYTES = 255 - '.lock'.length;

export function validRefName(name: string): boolean {
  if (!name || name === '@' || name.startsWith('-')) return false;
  if (name.startsWith('refs/heads/') || name.startsWith('refs/remotes/')) return false;
  // Control characters, DEL, space and git's specials; `..` and `@{` anywhere.
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name) || name.includes('..') || name.includes('@{')) return false;
  if (name.endsWith('.')) return false;
  // No empty component (a leading or trailing `/`, or `//`), none starting with `.` or ending with `.lock`.
  return name
    .split('/')
    .every(
      (part) =>
        part !== '' &&
        !part.startsWith('.') &&
        !part.endsWith('.lock') &&
        Buffer.byteLength(part) <= MAX_REF_PART_BYTES,
    );
}
