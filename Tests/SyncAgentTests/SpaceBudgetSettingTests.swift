import Foundation
import Testing
import Ubiquity

/// `space-budget =` in ubiquity.conf's agent settings.
@Suite("ubiquity.conf: space-budget")
struct SpaceBudgetSettingTests {
    private func budget(_ value: String) throws -> Int64? {
        try UbiquityConfiguration.parse("provider = agent\nspace-budget = \(value)\n", path: "test.conf").agent.spaceBudget
    }

    @Test("sizes in bytes or with K, M, G, T (powers of 1024); none turns it off; anything else is refused with the line")
    func parsing() throws {
        #expect(try budget("2G") == 2 << 30)
        #expect(try budget("500M") == 500 << 20)
        #expect(try budget("1.5 GiB") == 3 << 29)
        #expect(try budget("4096") == 4096)
        #expect(try budget("64k") == 64 << 10)
        #expect(try budget("none") == nil)
        #expect(try UbiquityConfiguration.parse("provider = agent\n", path: "test.conf").agent.spaceBudget == nil)
        for bad in ["lots", "-1G", "2X", "1e30T"] {
            #expect(throws: UbiquityError.self) { try budget(bad) }
        }
    }
}
