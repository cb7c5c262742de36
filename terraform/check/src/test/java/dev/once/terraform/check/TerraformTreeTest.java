package dev.once.terraform.check;

import static dev.once.terraform.check.Trees.assertClean;

import dev.once.config.Setting;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The repository's terraform/ agrees with the code. Each test is one check; BrokenTreeTest shows each can fail. */
class TerraformTreeTest {

  @Test
  void everyFileParses_andEveryReferenceResolves() {
    assertClean(new ReferenceCheck().findings(Trees.real()));
  }

  @Test
  void everyEntryPoint_isAClassOfTheRightKindForItsTrigger() {
    assertClean(new EntryPointCheck(Thread.currentThread().getContextClassLoader()).findings(Trees.real()));
  }

  @Test
  void theEnvironment_isExactlyWhatTheCodeReads() {
    assertClean(EnvironmentCheck.forCode().findings(Trees.real()));
    assertClean(PrivilegeCheck.forCode().findings(Trees.real()));
  }

  @Test
  void noDeployedCode_readsTheEnvironmentAroundTheRegistry() {
    assertClean(new GetenvScan(Trees.ROOT, GetenvScan.DEPLOYED_SOURCES,
        CodeSettings.all().stream().map(Setting::name).collect(Collectors.toSet())).findings());
  }

  @Test
  void theTtlPolicy_isOnTheLedgersCollectionAndField() {
    assertClean(LedgerCheck.forCode().findings(Trees.real()));
  }

  @Test
  void theFirestoreIndexes_serveTheQueriesOfTheCode_andNothingElse() {
    assertClean(FirestoreIndexCheck.forCode(Trees.ROOT).findings(Trees.real()));
  }

  @Test
  void aFreshProject_getsItsServiceAgentsAndWaitsForThemBeforeTheTriggers() {
    assertClean(new FreshProjectCheck().findings(Trees.real()));
  }

  @Test
  void everyGoogleBlock_readsRightAgainstTheProvider7Schema() {
    assertClean(SchemaCheck.google7().findings(Trees.real()));
  }

  @Test
  void everyProviderRange_admitsOnlyCheckedMajors() {
    assertClean(new ProviderVersionCheck().findings(Trees.real()));
  }

  @Test
  void theScheduler_postsToTheReconciler() {
    assertClean(new SchedulerCheck().findings(Trees.real()));
  }

  @Test
  void everyTriggerSubscription_getsADeadLetterPolicy() {
    assertClean(new DeadLetterCheck().findings(Trees.real()));
  }

  @Test
  void theAlerts_coverFailuresBacklogAndDeadLetters_withRunbooks_andIgnoreNoise() {
    assertClean(new AlertCheck().findings(Trees.real()));
  }

  @Test
  void theDashboard_showsWhatTheOperatorNeeds() {
    assertClean(new DashboardCheck().findings(Trees.real()));
  }

  @Test
  void theAlertsAndTheDashboard_nameOnlyDefinedMetrics_andWhatTheCodeLogs() {
    assertClean(MonitoringQueryCheck.forCode(Trees.ROOT).findings(Trees.real()));
  }

  @Test
  void theRuntime_matchesTheCompilerRelease() {
    assertClean(RuntimeCheck.fromParentPom(Trees.ROOT.resolve("pom.xml")).findings(Trees.real()));
  }

  @Test
  void onlyTheWebhook_isPublic() {
    assertClean(new PublicInvokerCheck(PublicInvokerCheck.WEBHOOK).findings(Trees.real()));
  }
}
