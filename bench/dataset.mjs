// The benchmark's dataset, the same on every run (a seeded generator), made through the API as a
// client would: users, groups, projects across them, and one group holding 1,000 projects.
// The synthetic repository is made by repository.mjs.

/** mulberry32: a small, fast, seeded PRNG, so every run seeds the same dataset. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const SIZES = {
  full: { users: 10_000, groups: 1_000, projects: 10_000, bigGroupProjects: 1_000 },
  quick: { users: 300, groups: 30, projects: 400, bigGroupProjects: 200 },
};

/** Runs `work(i)` for i in [0, n) with `parallel` in flight. */
export async function inParallel(n, parallel, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

/**
 * Seeds the dataset through the API with root's token. Answers what the workloads need: the big
 * group, a public project, a member's token (developer of the big group, not an administrator).
 */
export async function seedDataset(call, rootToken, size, log = () => {}) {
  const random = prng(20261124);
  const started = performance.now();
  const visibility = () => {
    const r = random();
    return r < 0.5 ? 'public' : r < 0.8 ? 'internal' : 'private';
  };
  await inParallel(size.users, 8, (i) =>
    call('POST', '/users', rootToken, {
      username: `user${i}`,
      email: `user${i}@example.com`,
      name: `User ${i}`,
      password: 'bench-password-1',
      skip_confirmation: true,
    }),
  );
  log(`${size.users} users`);
  const groupVisibility = Array.from({ length: size.groups }, (_, i) => (i === 0 ? 'public' : visibility()));
  const groups = new Array(size.groups);
  await inParallel(size.groups, 8, async (i) => {
    groups[i] = await call('POST', '/groups', rootToken, {
      name: `Group ${i}`,
      path: `group-${i}`,
      visibility: groupVisibility[i],
    });
  });
  log(`${size.groups} groups`);
  const big = groups[0];
  const member = await call('GET', '/users?username=user1', rootToken).then((r) => r[0]);
  await call('POST', `/groups/${big.id}/members`, rootToken, { user_id: member.id, access_level: 30 });
  const { token: memberToken } = await call('POST', `/users/${member.id}/impersonation_tokens`, rootToken, {
    name: 'bench',
    scopes: ['api'],
  });
  // The big group's projects first, then the rest spread over the other groups.
  const placements = Array.from({ length: size.projects }, (_, i) =>
    i < size.bigGroupProjects ? 0 : 1 + Math.floor(random() * (size.groups - 1)),
  );
  const projectVisibility = placements.map((g) => {
    const v = visibility();
    // A project is never more open than its group.
    const order = ['private', 'internal', 'public'];
    return order[Math.min(order.indexOf(v), order.indexOf(groupVisibility[g]))];
  });
  let publicProject;
  await inParallel(size.projects, 8, async (i) => {
    const p = await call('POST', '/projects', rootToken, {
      name: `Project ${i}`,
      namespace_id: groups[placements[i]].id,
      visibility: projectVisibility[i],
    });
    if (!publicProject && p.visibility === 'public') publicProject = p;
  });
  log(`${size.projects} projects`);
  return { big, member, memberToken, publicProject, seconds: (performance.now() - started) / 1000 };
}
