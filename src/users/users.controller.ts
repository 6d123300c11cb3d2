import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiTags } from '@nestjs/swagger';
import { AdminOnly, CurrentAdmin, Public } from '@/http/access/access.decorators';
import type { AdminCaller } from '@/core/caller';
import {
  ApiEmpty,
  ApiErrors,
  ApiJson,
  ApiProjectPath,
  ApiOptionalToken,
  ApiToken,
} from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { CURRENT } from '@/http/routes';
import { ServedProject } from '@/core/project/served-project';
import { toUserJson, userFieldDescriptors } from '@/users/users.mapper';
import { UsersService } from '@/users/users.service';

// User bodies depend on the project's user fields, so their schemas are generated from the project
// (see users.openapi.ts) and the bodies are checked by the users rules, not by a DTO.
@ApiTags('users')
@ApiProjectPath()
@ApiErrors(...COMMON_ERRORS)
@Controller(CURRENT)
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly served: ServedProject,
  ) {}

  /** The user fields: `username`, `is_admin`, then the project's own, with type, required and default. */
  @Public()
  @ApiOptionalToken()
  @Get('user-fields')
  @ApiJson('UserFieldDescriptor', 'The user fields', true)
  userFields(): Record<string, unknown>[] {
    return userFieldDescriptors(this.served.current.userFields);
  }

  /** Every user, without passwords. */
  @ApiToken()
  @Get('users')
  @ApiJson('User', 'Every user', true)
  async list(): Promise<Record<string, unknown>[]> {
    const users = await this.users.list();
    return users.map((user) => toUserJson(user, this.users.fieldsOf(user)));
  }

  /** Adds a user (administrators). Empty body. */
  @ApiToken()
  @AdminOnly()
  @Post('users')
  @HttpCode(200)
  @ApiBody({ schema: { $ref: '#/components/schemas/NewUser' } })
  @ApiEmpty('Added')
  @ApiErrors(...BODY_ERRORS, 403)
  async create(@CurrentAdmin() caller: AdminCaller, @Body() body: unknown): Promise<void> {
    await this.users.create(caller, body);
  }

  /** Changes `is_admin` or user fields of a user (administrators); only the fields sent. Empty body. */
  @ApiToken()
  @AdminOnly()
  @Put('users/:username')
  @HttpCode(200)
  @ApiBody({ schema: { $ref: '#/components/schemas/UserUpdate' } })
  @ApiEmpty('Updated')
  @ApiErrors(...BODY_ERRORS, 403)
  async update(
    @CurrentAdmin() caller: AdminCaller,
    @Param('username') username: string,
    @Body() body: unknown,
  ): Promise<void> {
    await this.users.update(caller, username, body);
  }

  /** Deletes a user and, with them, all their tokens (administrators). Empty body. */
  @ApiToken()
  @AdminOnly()
  @Delete('users/:username')
  @HttpCode(200)
  @ApiEmpty('Deleted, with their tokens')
  @ApiErrors(...BODY_ERRORS, 403)
  async delete(
    @CurrentAdmin() caller: AdminCaller,
    @Param('username') username: string,
  ): Promise<void> {
    await this.users.delete(caller, username);
  }

  /**
   * Lifts the lock that failed logins put on a username (`LOGIN_MAX_FAILURES` within
   * `LOGIN_WINDOW_SECONDS`, then 429), on every server process (administrators). The failures are
   * forgotten; a lock on a client address is not lifted. 204 whether or not the user was locked.
   */
  @ApiToken()
  @AdminOnly()
  @Delete('users/:username/lockout')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The user may log in again' })
  @ApiErrors(...BODY_ERRORS, 403)
  async unlock(
    @CurrentAdmin() caller: AdminCaller,
    @Param('username') username: string,
  ): Promise<void> {
    await this.users.unlock(caller, username);
  }
}
