import type { Request } from 'express';
import { labelRoute, routeOf } from './request-log.middleware';

const request = (path: string, route?: string) =>
  ({ originalUrl: path, url: path, path, ...(route ? { route: { path: route } } : {}) }) as unknown as Request;

describe('routeOf', () => {
  it("names a request by Express's route, else the label a handler outside the router gave it, else unmatched", () => {
    expect(routeOf(request('/api/v4/projects/1', '/api/v4/projects/:id'))).toBe('/api/v4/projects/:id');
    const page = request('/acme/tools/-/blob/main/a.ts');
    expect(routeOf(page)).toBe('unmatched');
    labelRoute(page, '/*project/-/blob/*ref_path');
    expect(routeOf(page)).toBe('/*project/-/blob/*ref_path');
    // Passed on to the router and answered there: its route wins over the label.
    expect(routeOf(Object.assign(page, { route: { path: '/api/v4/:x' } }))).toBe('/api/v4/:x');
    const passed = request('/nothing');
    labelRoute(passed, '/:username');
    labelRoute(passed, undefined);
    expect(routeOf(passed)).toBe('unmatched');
  });
});
