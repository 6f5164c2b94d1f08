import { rebuildProgressOf, REBUILD_APPLICATION_NAME } from './rebuild';

describe("a rebuild's progress in its connection's application_name", () => {
  it('reads done and total from the name a rebuild sets, and nothing from any other', () => {
    expect(rebuildProgressOf(`${REBUILD_APPLICATION_NAME} 2000/12345`)).toEqual({ done: 2000, total: 12345 });
    expect(rebuildProgressOf(`${REBUILD_APPLICATION_NAME} 0/0`)).toEqual({ done: 0, total: 0 });
    expect(rebuildProgressOf('psql')).toBeUndefined();
    expect(rebuildProgressOf(`${REBUILD_APPLICATION_NAME} 12/`)).toBeUndefined();
    expect(rebuildProgressOf(`x ${REBUILD_APPLICATION_NAME} 1/2`)).toBeUndefined();
  });

  it('fits in the 63 bytes PostgreSQL keeps of an application_name, for any event count', () => {
    const longest = `${REBUILD_APPLICATION_NAME} ${Number.MAX_SAFE_INTEGER}/${Number.MAX_SAFE_INTEGER}`;
    expect(Buffer.byteLength(longest)).toBeLessThanOrEqual(63);
  });
});
