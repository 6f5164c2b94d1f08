export { ListMembersDto } from './groups.dto';
export { expiresAt as expiresAtParam } from './group-members.controller';
