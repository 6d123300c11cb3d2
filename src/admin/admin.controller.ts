import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AdminOnly, CurrentCaller } from '@/auth/auth.decorators';
import type { Caller } from '@/auth/caller';
import { toBuildJson } from '@/builds/builds.mapper';
import { BuildsService } from '@/builds/builds.service';
import { ApiProjectPath, ApiToken } from '@/common/api-docs';
import { CURRENT } from '@/common/routes';

@ApiTags('admin')
@ApiProjectPath()
@ApiToken()
@AdminOnly()
@Controller(CURRENT)
export class AdminController {
  constructor(private readonly builds: BuildsService) {}

  /**
   * Rebuilds the virtual data environment and waits for it (empty body). 400 `build_in_progress` while
   * another build is queued or running on any server process; 500 `build_failed` names the failing model.
   */
  @Post('build')
  @HttpCode(200)
  async build(@CurrentCaller() caller: Caller): Promise<void> {
    await this.builds.build(caller);
  }

  /** Build history, newest first: status, times, error, and rows and duration per model. */
  @Get('builds')
  async history(): Promise<Record<string, unknown>[]> {
    return (await this.builds.history()).map(toBuildJson);
  }
}
