import { LodeConfig } from './lode-config';

describe('LodeConfig', () => {
  describe('LODE_DEFAULT_BRANCH_PROTECTION', () => {
    it("defaults to GitLab's 2 (full protection)", () => {
      expect(LodeConfig.fromEnv({}).defaultBranchProtection).toBe(2);
      expect(LodeConfig.fromEnv({ LODE_DEFAULT_BRANCH_PROTECTION: '' }).defaultBranchProtection).toBe(2);
    });

    it('takes 0, 1, 2 and 3', () => {
      for (const v of [0, 1, 2, 3])
        expect(LodeConfig.fromEnv({ LODE_DEFAULT_BRANCH_PROTECTION: String(v) }).defaultBranchProtection).toBe(v);
    });

    it('refuses anything else at start', () => {
      for (const v of ['4', '-1', 'full', '1.5'])
        expect(() => LodeConfig.fromEnv({ LODE_DEFAULT_BRANCH_PROTECTION: v })).toThrow(
          /LODE_DEFAULT_BRANCH_PROTECTION/,
        );
    });
  });
});
